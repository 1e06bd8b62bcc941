// What the identity domain persists, as typed collections of the shared document-store port.
import type { AddressData } from '../../shared/address';
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

export interface AccountRecord extends StoredDoc {
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

export interface MembershipRecord extends StoredDoc {
  user_id: number;
  account_id: number;
  created_at: string;
}

export type ApiKeyKind = 'pat' | 'live' | 'test';

export interface ApiKeyRecord extends StoredDoc {
  kind: ApiKeyKind;
  token_hash: string;
  user_id: number | null;
  account_id: number | null;
  scopes: string[];
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface SessionRecord extends StoredDoc {
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
