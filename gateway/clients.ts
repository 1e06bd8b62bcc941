// gRPC clients of the services the gateway forwards to.
import { BankingServiceService, ContactsServiceService } from '../gen/invoicing/contacts/v1/contacts';
import { DocumentsServiceService } from '../gen/invoicing/documents/v1/documents';
import { ExpensesServiceService } from '../gen/invoicing/expenses/v1/expenses';
import { IdentityAdminServiceService, IdentityServiceService } from '../gen/invoicing/identity/v1/identity';
import { EventsServiceService } from '../gen/invoicing/rendering/v1/events';
import { RenderingServiceService } from '../gen/invoicing/rendering/v1/rendering';
import { AsyncClient, CallOptions, connect } from '../services/shared/grpc/typed';

export interface ServiceAddresses {
  identity: string;
  contacts: string;
  documents: string;
  rendering: string;
  expenses: string;
}

export interface GatewayClients {
  identity: AsyncClient<typeof IdentityServiceService>;
  contacts: AsyncClient<typeof ContactsServiceService>;
  banking: AsyncClient<typeof BankingServiceService>;
  documents: AsyncClient<typeof DocumentsServiceService>;
  rendering: AsyncClient<typeof RenderingServiceService>;
  expenses: AsyncClient<typeof ExpensesServiceService>;
  /** The events log: a part of the rendering service. */
  events: AsyncClient<typeof EventsServiceService>;
  close(): void;
}

export function connectClients(addresses: ServiceAddresses): GatewayClients {
  const identity = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', addresses.identity);
  const contacts = connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', addresses.contacts);
  const banking = connect(BankingServiceService, 'invoicing.contacts.v1.BankingService', addresses.contacts);
  const documents = connect(DocumentsServiceService, 'invoicing.documents.v1.DocumentsService', addresses.documents);
  const rendering = connect(RenderingServiceService, 'invoicing.rendering.v1.RenderingService', addresses.rendering);
  const expenses = connect(ExpensesServiceService, 'invoicing.expenses.v1.ExpensesService', addresses.expenses);
  const events = connect(EventsServiceService, 'invoicing.rendering.v1.EventsService', addresses.rendering);
  return {
    identity,
    contacts,
    banking,
    documents,
    rendering,
    expenses,
    events,
    close: () => [identity, contacts, banking, documents, rendering, expenses, events].forEach((c) => c.close()),
  };
}

/** Every call's options extended with `extra` (the idempotency token of a keyed POST). */
export function withCallOptions(clients: GatewayClients, extra: Pick<CallOptions, 'idempotency'>): GatewayClients {
  const bind = <C extends object>(client: C): C =>
    new Proxy(client, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function' || name === 'close') return value;
        return (request: unknown, call: CallOptions = {}) => value.call(target, request, { ...call, ...extra });
      },
    });
  return {
    identity: bind(clients.identity),
    contacts: bind(clients.contacts),
    banking: bind(clients.banking),
    documents: bind(clients.documents),
    rendering: bind(clients.rendering),
    expenses: bind(clients.expenses),
    events: bind(clients.events),
    close: () => clients.close(),
  };
}

/** The admin surface (CLI only; never routed over HTTP), at identity's admin port. */
export function connectAdmin(identityAdminAddress: string) {
  return connect(IdentityAdminServiceService, 'invoicing.identity.v1.IdentityAdminService', identityAdminAddress);
}
