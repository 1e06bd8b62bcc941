// gRPC clients of the services the gateway forwards to.
import { BankingServiceService, ContactsServiceService } from '../gen/invoicing/contacts/v1/contacts';
import { IdentityAdminServiceService, IdentityServiceService } from '../gen/invoicing/identity/v1/identity';
import { AsyncClient, connect } from '../services/shared/grpc/typed';

export interface ServiceAddresses {
  identity: string;
  contacts: string;
}

export interface GatewayClients {
  identity: AsyncClient<typeof IdentityServiceService>;
  contacts: AsyncClient<typeof ContactsServiceService>;
  banking: AsyncClient<typeof BankingServiceService>;
  close(): void;
}

export function connectClients(addresses: ServiceAddresses): GatewayClients {
  const identity = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', addresses.identity);
  const contacts = connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', addresses.contacts);
  const banking = connect(BankingServiceService, 'invoicing.contacts.v1.BankingService', addresses.contacts);
  return {
    identity,
    contacts,
    banking,
    close: () => [identity, contacts, banking].forEach((c) => c.close()),
  };
}

/** The admin surface (CLI only; never routed over HTTP). */
export function connectAdmin(identityAddress: string) {
  return connect(IdentityAdminServiceService, 'invoicing.identity.v1.IdentityAdminService', identityAddress);
}
