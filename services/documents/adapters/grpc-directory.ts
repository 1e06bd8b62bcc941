// The Directory port over gRPC: the identity service (the workspace's legal identity, as supplier)
// and the contacts service (purchasers' legal entities, bank accounts).
import { status as GrpcStatus } from '@grpc/grpc-js';
import { Address } from '../../../gen/invoicing/common/v1/common';
import { BankingServiceService, ContactsServiceService } from '../../../gen/invoicing/contacts/v1/contacts';
import { IdentityServiceService } from '../../../gen/invoicing/identity/v1/identity';
import { DomainError } from '../../shared/errors';
import { RemoteCallError } from '../../shared/grpc/errors';
import { AsyncClient, connect } from '../../shared/grpc/typed';
import { Tenant } from '../../shared/tenant';
import { Directory } from '../ports/directory';
import { AddressData, BankDetailsData, PartyData } from '../ports/documents-store';

const address = (a: Address | undefined): AddressData | null => (a ? { ...a } : null);

const unavailable = (peer: string) => new DomainError('unavailable', 'service_unavailable', `the ${peer} service is unavailable`);

/** NOT_FOUND → null; an unreachable peer → UNAVAILABLE (503), never INTERNAL. */
async function lookup<T>(peer: string, call: () => Promise<T>): Promise<T | null> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof RemoteCallError && err.status === GrpcStatus.NOT_FOUND) return null;
    if (err instanceof RemoteCallError && [GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED].includes(err.status)) throw unavailable(peer);
    throw err;
  }
}

export class GrpcDirectory implements Directory {
  private readonly identity?: AsyncClient<typeof IdentityServiceService> & { close(): void };
  private readonly contacts?: AsyncClient<typeof ContactsServiceService> & { close(): void };
  private readonly banking?: AsyncClient<typeof BankingServiceService> & { close(): void };

  constructor(peers: { identity?: string; contacts?: string }) {
    if (peers.identity) this.identity = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', peers.identity);
    if (peers.contacts) {
      this.contacts = connect(ContactsServiceService, 'invoicing.contacts.v1.ContactsService', peers.contacts);
      this.banking = connect(BankingServiceService, 'invoicing.contacts.v1.BankingService', peers.contacts);
    }
  }

  async supplier(accountId: number, deadline?: number): Promise<PartyData> {
    const identity = this.identity;
    if (!identity) throw unavailable('identity');
    const res = await lookup('identity', () => identity.getAccount({ account_id: accountId }, { deadline }));
    const account = res?.account;
    if (!account) throw new DomainError('not_found', 'resource_not_found', 'account not found');
    const li = account.legal_identity;
    return {
      id: 0,
      name: li?.name || account.name,
      registration_id: li?.registration_id ?? '',
      tax_id: li?.tax_id ?? '',
      vat_id: li?.vat_id ?? '',
      email: li?.email ?? '',
      phone: li?.phone_number ?? '',
      address: address(li?.address),
      postal_address: address(li?.postal_address),
    };
  }

  async purchaser(tenant: Tenant, legalEntityId: number, deadline?: number): Promise<PartyData | null> {
    const contacts = this.contacts;
    if (!contacts) throw unavailable('contacts');
    const res = await lookup('contacts', () => contacts.getLegalEntity({ tenant, id: legalEntityId }, { deadline }));
    const e = res?.legal_entity;
    if (!e) return null;
    return {
      id: e.id,
      name: e.name,
      registration_id: e.registration_id,
      tax_id: e.tax_id,
      vat_id: e.vat_id,
      email: e.email,
      phone: e.phone,
      address: address(e.address),
      postal_address: address(e.postal_address),
    };
  }

  async bankAccount(tenant: Tenant, id: number): Promise<BankDetailsData | null> {
    const banking = this.banking;
    if (!banking) throw unavailable('contacts');
    const res = await lookup('contacts', () => banking.getBankAccount({ tenant, id }));
    const b = res?.bank_account;
    if (!b || b.deleted) return null;
    return { id: b.id, name: b.name, iban: b.iban ?? '', account_number: b.account_number ?? '', swift: b.swift ?? '', bank_code: b.bank_code ?? '' };
  }

  close(): void {
    for (const client of [this.identity, this.contacts, this.banking]) client?.close();
  }
}
