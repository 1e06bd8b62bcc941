// How a workspace looks to a user (spec §2 Account).
import { AccountRecord, LegalIdentityData, SubscriptionData, UserRecord } from '../ports/identity-store';

export interface AccountView {
  id: number;
  name: string;
  default: boolean;
  created_at: string;
  updated_at: string;
  accounting_type: AccountRecord['accounting_type'];
  onboarding_step: string | null;
  vat_registration_alert: boolean | null;
  logo_key: string | null;
  legal_identity: LegalIdentityData | null;
  suspended: boolean;
}

/** Personal workspaces take their owner's name; others their legal entity's registered name. */
export function accountName(account: AccountRecord, owner: UserRecord | null): string {
  if (!account.personal && account.legal_identity?.name) return account.legal_identity.name;
  return owner?.name || owner?.email || account.legal_identity?.name || `Workspace ${account.id}`;
}

export function accountView(account: AccountRecord, owner: UserRecord | null, isDefault: boolean): AccountView {
  return {
    id: account.id,
    name: accountName(account, owner),
    default: isDefault,
    created_at: account.created_at,
    updated_at: account.updated_at,
    accounting_type: account.accounting_type,
    onboarding_step: account.onboarding_step,
    vat_registration_alert: account.vat_registration_alert,
    logo_key: account.logo_key,
    legal_identity: account.legal_identity,
    suspended: account.suspended,
  };
}

export const DEFAULT_SUBSCRIPTION: SubscriptionData = {
  active: true,
  features: ['attachment_to_document'],
  caps: { bank_accounts: 10 },
  quotas: { ai_expense_extractions: 100, mail_recipients_per_day: 500 },
};
