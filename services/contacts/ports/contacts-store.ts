// What the contacts domain persists. Every record belongs to one tenant (account_id + livemode).
import type { AddressData } from '../../shared/address';
import type { CreatedUnderKey } from '../../shared/idempotency';
import type { OutboxFields } from '../../shared/outbox/entries';
import { Collection, StoredDoc } from '../../shared/store/port';
import type { Tenant } from '../../shared/tenant';

export type { AddressData };


interface TenantOwned extends StoredDoc {
  account_id: number;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

/** A party documents and contacts point to. Owned by the tenant that created it and visible to it alone. */
export interface LegalEntityRecord extends TenantOwned {
  name: string;
  registration_id: string;
  /** registration_id folded (foldIdentifier) for the lookup by identifier; absent on entities written before it existed. */
  registration_key?: string;
  tax_id: string;
  vat_id: string;
  email: string;
  phone: string;
  address: AddressData | null;
  postal_address: AddressData | null;
}

/** Created under an Idempotency-Key: the key is kept on the record (a retry answers it). */
/** Contacts and bank accounts keep an outbox (docs/events.md); records written before it have none. */
export interface ContactRecord extends TenantOwned, CreatedUnderKey, Partial<OutboxFields> {
  name: string;
  invoice_account_id: number;
  suspended: boolean;
  deleted: string | null;
  /** Lower-cased contact name and legal-entity name, for the literal substring search `q`. */
  search_text: string;
}

export type BankAccountType = 'bank' | 'cash';

/** Prefix of the unique key a record's plan-cap slot takes (`cap_slot:<tenant>:<n>`). */
export const CAP_SLOT_KEY = 'cap_slot:';

export interface BankAccountRecord extends TenantOwned, CreatedUnderKey, Partial<OutboxFields> {
  account_type: BankAccountType;
  name: string;
  iban: string | null;
  account_number: string | null;
  swift: string | null;
  bank_code: string | null;
  /**
   * Whether account_number was entered in the Czech/Slovak national form (`[prefix-]number/bank code`): its
   * bank code then belongs to the number and bank_code follows it, also in later PATCHes. Absent on older
   * records (read as false).
   */
  national_bank_code?: boolean;
  currency: string | null;
  deleted: string | null;
  /**
   * The plan-cap slot (0 … cap−1) this record occupies while not deleted; null for records created without
   * a cap (cash registers, uncapped plans). The store's unique key on it makes the cap hold under races.
   */
  slot?: number | null;
}

/** A folded identifier (foldIdentifier) to look contacts up by: the legal entity's registration_key or vat_id. */
export interface IdentifierQuery {
  field: 'registration_key' | 'vat_id';
  value: string;
}

export interface ContactsStore {
  legalEntities: Collection<LegalEntityRecord>;
  contacts: Collection<ContactRecord>;
  bankAccounts: Collection<BankAccountRecord>;
  nextId(kind: 'legal_entity' | 'contact' | 'bank_account'): Promise<number>;
  /**
   * At most `limit` live (not deleted) contacts of the tenant whose legal entity has this identifier,
   * newest legal entity first, newest contact first within it. Index reads on the legal entities'
   * (account_id, livemode, identifier) and the contacts' (account_id, livemode, invoice_account_id):
   * the cost follows the entities carrying the identifier, never the size of the workspace.
   */
  contactsByIdentifier(tenant: Tenant, query: IdentifierQuery, limit: number): Promise<ContactRecord[]>;
}
