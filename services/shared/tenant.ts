// The data partition of a request: a workspace, live or sandbox (test tokens). Every tenant record
// stores both fields and every query filters on both, so sandbox and live data never meet.
export interface Tenant {
  account_id: number;
  livemode: boolean;
}

export function requireTenant(tenant: Tenant | undefined): Tenant {
  if (!tenant || !Number.isSafeInteger(tenant.account_id) || tenant.account_id <= 0) throw new Error('request without a tenant');
  return { account_id: tenant.account_id, livemode: tenant.livemode };
}

export const tenantWhere = (t: Tenant) => ({ account_id: t.account_id, livemode: t.livemode });

export const ownedBy = (record: { account_id: number; livemode: boolean } | null, t: Tenant): boolean =>
  record !== null && record.account_id === t.account_id && record.livemode === t.livemode;

/** Stable text form for pagination filter keys and unique keys. */
export const tenantKey = (t: Tenant) => `${t.account_id}:${t.livemode ? 'live' : 'test'}`;
