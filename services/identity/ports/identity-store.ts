// What the identity domain persists, as typed collections of the shared document-store port.
import type { AddressData } from '../../shared/address';
import type { OutboxFields } from '../../shared/outbox/entries';
import { Collection, StoredDoc } from '../../shared/store/port';

export type { AddressData };


export interface LegalIdentityData {
  name: string;
  registration_id: string;
  tax_id: string;
  vat_id: string;
  vat_payer_type: string;
  vat_period: string;
  email: string;
  phone_number: string;
  web: string;
  legal_form: string;
  legal_form_id: number | null;
  address: AddressData | null;
  postal_address: AddressData | null;
}

/** Payloads of the identity events (invoicing.events.v1.Event oneof members) kept in outboxes. */
export type IdentityEventPayload =
  | { credential_revoked: { credential_id: string } }
  | { workspace_changed: { account_id: number; user_id: number } };

/**
 * The outbox of a record whose changes gateways must learn of (revocations, suspension, plan, membership):
 * the events travel in the same single-document write as the change. Optional: records that never changed
 * that way have none.
 */
export type IdentityOutbox = Partial<OutboxFields<IdentityEventPayload>>;

export interface SubscriptionData {
  active: boolean;
  features: string[];
  caps: Record<string, number>;
  quotas: Record<string, number>;
}

export interface UserRecord extends StoredDoc {
  email: string;
  name: string;
  password_hash: string;
  default_account_id: number | null;
  created_at: string;
  updated_at: string;
}

export type AccountingType = 'simple' | 'double_entry' | 'flat_rate_expenses';

export interface AccountRecord extends StoredDoc, IdentityOutbox {
  owner_user_id: number;
  /** Personal workspaces are named after their owner; others after their legal entity. */
  personal: boolean;
  suspended: boolean;
  subscription: SubscriptionData;
  legal_identity: LegalIdentityData | null;
  accounting_type: AccountingType | null;
  onboarding_step: string | null;
  vat_registration_alert: boolean | null;
  logo_key: string | null;
  created_at: string;
  updated_at: string;
}

export interface MembershipRecord extends StoredDoc, IdentityOutbox {
  user_id: number;
  account_id: number;
  created_at: string;
}

export type ApiKeyKind = 'pat' | 'live' | 'test';

export interface ApiKeyRecord extends StoredDoc, IdentityOutbox {
  kind: ApiKeyKind;
  token_hash: string;
  user_id: number | null;
  account_id: number | null;
  scopes: string[];
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface SessionRecord extends StoredDoc, IdentityOutbox {
  user_id: number;
  expires_at: string;
  /** Set by sign-out: the session is on the deny list. */
  revoked_at: string | null;
  created_at: string;
}

export interface IdentityStore {
  users: Collection<UserRecord>;
  accounts: Collection<AccountRecord>;
  memberships: Collection<MembershipRecord>;
  apiKeys: Collection<ApiKeyRecord>;
  sessions: Collection<SessionRecord>;
  nextId(kind: 'user' | 'account' | 'membership' | 'api_key' | 'session'): Promise<number>;
}
