// Domain views → generated proto messages.
import { Account, AccountingType, CredentialType, LegalIdentity, Principal as PrincipalMessage, User } from '../../../gen/invoicing/identity/v1/identity';
import { AccountView } from '../domain/accounts';
import { Principal } from '../domain/identity';
import { LegalIdentityData, UserRecord } from '../ports/identity-store';

const ACCOUNTING: Record<string, AccountingType> = {
  simple: AccountingType.ACCOUNTING_TYPE_SIMPLE,
  double_entry: AccountingType.ACCOUNTING_TYPE_DOUBLE_ENTRY,
  flat_rate_expenses: AccountingType.ACCOUNTING_TYPE_FLAT_RATE_EXPENSES,
};

const CREDENTIAL: Record<Principal['credential_type'], CredentialType> = {
  personal_access_token: CredentialType.CREDENTIAL_TYPE_PERSONAL_ACCESS_TOKEN,
  workspace_token: CredentialType.CREDENTIAL_TYPE_WORKSPACE_TOKEN,
  session: CredentialType.CREDENTIAL_TYPE_SESSION,
};

export function toPrincipalMessage(p: Principal): PrincipalMessage {
  return { ...p, credential_type: CREDENTIAL[p.credential_type] };
}

export function toUserMessage(u: UserRecord): User {
  return { id: u.id, email: u.email, name: u.name, created_at: u.created_at, updated_at: u.updated_at };
}

export function toLegalIdentityMessage(li: LegalIdentityData): LegalIdentity {
  return {
    ...li,
    legal_form_id: li.legal_form_id ?? undefined,
    address: li.address ?? undefined,
    postal_address: li.postal_address ?? undefined,
  };
}

export function fromLegalIdentityMessage(li: LegalIdentity): LegalIdentityData {
  return {
    ...li,
    legal_form_id: li.legal_form_id ?? null,
    address: li.address ?? null,
    postal_address: li.postal_address ?? null,
  };
}

export function toAccountMessage(a: AccountView, logoUrl: string | null): Account {
  return {
    id: a.id,
    name: a.name,
    default: a.default,
    created_at: a.created_at,
    updated_at: a.updated_at,
    accounting_type: a.accounting_type ? ACCOUNTING[a.accounting_type] : AccountingType.ACCOUNTING_TYPE_UNSPECIFIED,
    onboarding_step: a.onboarding_step ?? undefined,
    vat_registration_alert: a.vat_registration_alert ?? undefined,
    logo_url: logoUrl ?? undefined,
    logo_key: a.logo_key ?? undefined,
    legal_identity: a.legal_identity ? toLegalIdentityMessage(a.legal_identity) : undefined,
    suspended: a.suspended,
  };
}
