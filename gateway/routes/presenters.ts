// gRPC messages → the JSON the API returns. Optional proto fields become explicit nulls.
import { Account, AccountingType, CredentialType, LegalIdentity, Principal, User } from '../../gen/invoicing/identity/v1/identity';
import { Address } from '../../gen/invoicing/common/v1/common';

const ACCOUNTING_TYPE: Record<number, string | null> = {
  [AccountingType.ACCOUNTING_TYPE_UNSPECIFIED]: null,
  [AccountingType.ACCOUNTING_TYPE_SIMPLE]: 'simple',
  [AccountingType.ACCOUNTING_TYPE_DOUBLE_ENTRY]: 'double_entry',
  [AccountingType.ACCOUNTING_TYPE_FLAT_RATE_EXPENSES]: 'flat_rate_expenses',
};

export const CREDENTIAL_TYPE: Record<number, string> = {
  [CredentialType.CREDENTIAL_TYPE_PERSONAL_ACCESS_TOKEN]: 'personal_access_token',
  [CredentialType.CREDENTIAL_TYPE_WORKSPACE_TOKEN]: 'workspace_token',
  [CredentialType.CREDENTIAL_TYPE_SESSION]: 'session',
};

/**
 * An optional text field of a proto message → JSON. proto3 strings have no presence, so the services
 * spell "absent" as "": the API returns null for it (docs/decisions.md, "absent values are null").
 */
export const textOrNull = (value: string | undefined): string | null => (value ? value : null);

/** An address without any part reads null (docs/decisions.md), wherever it is printed. */
export function presentAddress(a: Address | undefined) {
  if (!a) return null;
  const address = {
    name: textOrNull(a.name),
    street: textOrNull(a.street),
    municipality: textOrNull(a.municipality),
    postal_code: textOrNull(a.postal_code),
    country_alpha2: textOrNull(a.country_alpha2),
    contact: textOrNull(a.contact),
  };
  return Object.values(address).some((part) => part !== null) ? address : null;
}

export function presentLegalIdentity(li: LegalIdentity | undefined) {
  if (!li) return null;
  return {
    name: textOrNull(li.name),
    registration_id: textOrNull(li.registration_id),
    tax_id: textOrNull(li.tax_id),
    vat_id: textOrNull(li.vat_id),
    vat_payer_type: textOrNull(li.vat_payer_type),
    vat_period: textOrNull(li.vat_period),
    email: textOrNull(li.email),
    phone_number: textOrNull(li.phone_number),
    web: textOrNull(li.web),
    legal_form: textOrNull(li.legal_form),
    legal_form_id: li.legal_form_id ?? null,
    address: presentAddress(li.address),
    postal_address: presentAddress(li.postal_address),
  };
}

export function presentAccount(a: Account) {
  return {
    id: a.id,
    name: a.name,
    default: a.default,
    created_at: a.created_at,
    updated_at: a.updated_at,
    accounting_type: ACCOUNTING_TYPE[a.accounting_type] ?? null,
    onboarding_step: a.onboarding_step ?? null,
    vat_registration_alert: a.vat_registration_alert ?? null,
    logo_url: a.logo_url ?? null,
    legal_identity: presentLegalIdentity(a.legal_identity),
  };
}

export function presentUser(u: User) {
  return { id: u.id, email: u.email, name: u.name, created_at: u.created_at, updated_at: u.updated_at };
}

export function presentCredential(p: Principal) {
  return {
    type: CREDENTIAL_TYPE[p.credential_type],
    id: p.credential_id,
    scopes: p.scopes,
    account_id: p.account_id || null,
    livemode: p.livemode,
    expires_at: p.expires_at || null,
  };
}
