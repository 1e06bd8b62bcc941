// What the documents domain needs from other services: the workspace's legal identity (identity),
// purchasers and bank accounts (contacts). Implemented over gRPC in adapters/grpc-directory.ts.
import { Tenant } from '../../shared/tenant';
import { BankDetailsData, PartyData } from './documents-store';

// `deadline` (ms since the epoch): the caller's deadline, passed on to the peer (services/shared/grpc/deadline.ts).
export interface Directory {
  /** The workspace as supplier (its legal identity; its name when it has none). */
  supplier(accountId: number, deadline?: number): Promise<PartyData>;
  /** A legal entity visible to the tenant, or null. */
  purchaser(tenant: Tenant, legalEntityId: number, deadline?: number): Promise<PartyData | null>;
  /** A bank account or cash register of the tenant, or null. */
  bankAccount(tenant: Tenant, id: number): Promise<BankDetailsData | null>;
}

export interface Clock {
  now(): Date;
}

export interface IdSource {
  /** A unique event id (UUID). */
  eventId(): string;
}
