// The `ai_expense_extractions` quota (spec §8): how many extraction jobs a workspace may start per
// calendar month (UTC), live and sandbox counted apart. Metered when a job is requested — on upload and
// on retry_extraction — by a compare-and-set on one counter record per (tenant, month), so two requests
// racing for the last extraction cannot both get it. The allowance is the plan's (identity's
// subscription quotas, passed by the gateway); a plan without it allows none.
import { Collection, CollectionSpec, mutate, StoredDoc, UniqueViolation } from '../../shared/store/port';
import { Tenant, tenantKey } from '../../shared/tenant';

export interface QuotaCounter extends StoredDoc {
  key: string;
  account_id: number;
  livemode: boolean;
  /** YYYY-MM (UTC). */
  period: string;
  used: number;
}

export const quotaCountersSpec: CollectionSpec<QuotaCounter> = {
  name: 'expense_extraction_quota',
  uniqueKeys: (c) => [c.key],
  indexes: [['key']],
};

export const quotaPeriod = (now: Date) => now.toISOString().slice(0, 7);

/** The counter with one more extraction used; null when the allowance is used up. */
export function charged(counter: QuotaCounter, allowance: number): QuotaCounter | null {
  return counter.used < allowance ? { ...counter, used: counter.used + 1 } : null;
}

export class ExtractionQuota {
  constructor(
    private readonly counters: Collection<QuotaCounter>,
    private readonly nextId: () => Promise<number>,
  ) {}

  private async counter(tenant: Tenant, now: Date): Promise<QuotaCounter> {
    const period = quotaPeriod(now);
    const key = `quota:${tenantKey(tenant)}:${period}`;
    const found = await this.counters.findOne({ key });
    if (found) return found;
    try {
      return await this.counters.insert({ id: await this.nextId(), key, account_id: tenant.account_id, livemode: tenant.livemode, period, used: 0 });
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      const winner = await this.counters.findOne({ key });
      if (!winner) throw err;
      return winner;
    }
  }

  /** Uses one extraction of this month's allowance; false when none is left (nothing changes then). */
  async take(tenant: Tenant, allowance: number, now: Date): Promise<boolean> {
    if (allowance <= 0) return false;
    const counter = await this.counter(tenant, now);
    let taken = false;
    await mutate(this.counters, counter.id, (current) => {
      const next = charged(current, allowance);
      taken = next !== null;
      return next;
    });
    return taken;
  }

  /** Gives back one extraction taken this month by a request that then failed before its job existed. */
  async giveBack(tenant: Tenant, now: Date): Promise<void> {
    const counter = await this.counter(tenant, now);
    await mutate(this.counters, counter.id, (current) => (current.used > 0 ? { ...current, used: current.used - 1 } : null));
  }

  async used(tenant: Tenant, now: Date): Promise<number> {
    return (await this.counter(tenant, now)).used;
  }
}
