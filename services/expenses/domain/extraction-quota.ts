// The `ai_expense_extractions` quota (spec §8): how many extraction jobs a workspace may start per
// calendar month (UTC), live and sandbox counted apart. Metered when a job is requested — on upload and
// on retry_extraction — by a compare-and-set on one counter record per (tenant, month), so two requests
// racing for the last extraction cannot both get it. The allowance is the plan's (identity's
// subscription quotas, passed by the gateway); a plan without it allows none.
//
// Taking a unit and writing the job are two single-document writes (the store has no multi-document
// transactions), so they are joined by a *hold* (docs/expenses.md "Quota and jobs commit together"):
// the unit is taken together with a hold naming the job in the same compare-and-set; the request then
// writes the job and commits the hold, or gives the unit back if it could not. A process that dies in
// between leaves the hold; `reconcile` (run by the upload sweeper) looks at holds older than a grace
// period and commits the ones whose job was written, gives the others back. A request that outlived the
// grace commits after reconcile gave its unit back: commit then charges the unit again (the job exists),
// so every job written costs exactly one unit and no unit is kept without a job.
import { Collection, CollectionSpec, mutate, StoredDoc, UniqueViolation } from '../../shared/store/port';
import { Tenant, tenantKey } from '../../shared/tenant';

/** A unit taken for a job not yet known to be written. */
export interface QuotaHold {
  job_id: string;
  expense_id: number;
  /** Epoch ms when the unit was taken. */
  at: number;
}

export interface QuotaCounter extends StoredDoc {
  key: string;
  account_id: number;
  livemode: boolean;
  /** YYYY-MM (UTC). */
  period: string;
  used: number;
  /** Units taken whose job is not yet known to be written (absent on counters written before holds). */
  holds?: QuotaHold[];
  /** Whether `holds` is non-empty: what reconcile lists by. */
  held?: boolean;
  /** Jobs whose hold reconcile gave back (the last RETURNED_KEPT): a late commit of one charges again. */
  returned?: string[];
}

/** What a request holds between taking a unit and committing it. */
export interface QuotaTicket {
  counterId: number;
  jobId: string;
}

export const quotaCountersSpec: CollectionSpec<QuotaCounter> = {
  name: 'expense_extraction_quota',
  uniqueKeys: (c) => [c.key],
  indexes: [['key'], ['held']],
};

export const quotaPeriod = (now: Date) => now.toISOString().slice(0, 7);

/** The counter with one more extraction used; null when the allowance is used up. */
export function charged(counter: QuotaCounter, allowance: number): QuotaCounter | null {
  return counter.used < allowance ? { ...counter, used: counter.used + 1 } : null;
}

const RETURNED_KEPT = 100;

const withHolds = (counter: QuotaCounter, holds: QuotaHold[]): QuotaCounter => ({ ...counter, holds, held: holds.length > 0 });
const holdOf = (counter: QuotaCounter, jobId: string) => (counter.holds ?? []).find((h) => h.job_id === jobId);
const without = (counter: QuotaCounter, jobId: string) => (counter.holds ?? []).filter((h) => h.job_id !== jobId);

/** Test-only latch: after a unit was taken (and held), before the caller writes its job. */
export interface QuotaHooks {
  afterTake?(ticket: QuotaTicket): Promise<void>;
}

export class ExtractionQuota {
  constructor(
    private readonly counters: Collection<QuotaCounter>,
    private readonly nextId: () => Promise<number>,
    readonly hooks: QuotaHooks = {},
  ) {}

  private async counter(tenant: Tenant, now: Date): Promise<QuotaCounter> {
    const period = quotaPeriod(now);
    const key = `quota:${tenantKey(tenant)}:${period}`;
    const found = await this.counters.findOne({ key });
    if (found) return found;
    try {
      return await this.counters.insert({ id: await this.nextId(), key, account_id: tenant.account_id, livemode: tenant.livemode, period, used: 0, holds: [], held: false });
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      const winner = await this.counters.findOne({ key });
      if (!winner) throw err;
      return winner;
    }
  }

  /**
   * Uses one extraction of this month's allowance for job `jobId` of expense `expenseId`, held until
   * commit or giveBack; null when none is left (nothing changes then).
   */
  async take(tenant: Tenant, allowance: number, now: Date, job: { jobId: string; expenseId: number }): Promise<QuotaTicket | null> {
    if (allowance <= 0) return null;
    const counter = await this.counter(tenant, now);
    let taken = false;
    await mutate(this.counters, counter.id, (current) => {
      taken = holdOf(current, job.jobId) !== undefined;
      if (taken) return null;
      const next = charged(current, allowance);
      taken = next !== null;
      return next && withHolds(next, [...(current.holds ?? []), { job_id: job.jobId, expense_id: job.expenseId, at: now.getTime() }]);
    });
    if (!taken) return null;
    const ticket = { counterId: counter.id, jobId: job.jobId };
    await this.hooks.afterTake?.(ticket);
    return ticket;
  }

  /**
   * The job was written: the unit stays used. If reconcile gave it back meanwhile (this request outlived
   * the grace), it is charged again; if reconcile already committed it, nothing changes.
   */
  async commit(ticket: QuotaTicket): Promise<void> {
    await mutate(this.counters, ticket.counterId, (current) => {
      if (holdOf(current, ticket.jobId)) return withHolds(current, without(current, ticket.jobId));
      const returned = current.returned ?? [];
      if (!returned.includes(ticket.jobId)) return null;
      return { ...current, used: current.used + 1, returned: returned.filter((j) => j !== ticket.jobId) };
    });
  }

  /** The job was not written: the unit is returned — once, however often this is called. */
  async giveBack(ticket: QuotaTicket): Promise<void> {
    await mutate(this.counters, ticket.counterId, (current) =>
      holdOf(current, ticket.jobId) ? { ...withHolds(current, without(current, ticket.jobId)), used: Math.max(0, current.used - 1) } : null,
    );
  }

  /**
   * Settles the holds older than `graceMs` (their request died between taking the unit and committing
   * it): committed when `written` finds the job, else given back. Counts both.
   */
  async reconcile(now: Date, graceMs: number, written: (hold: QuotaHold) => Promise<boolean>): Promise<{ committed: number; returned: number }> {
    const result = { committed: 0, returned: 0 };
    for (const counter of await this.counters.list({ where: { held: true }, limit: 100 })) {
      for (const hold of counter.holds ?? []) {
        if (hold.at + graceMs > now.getTime()) continue;
        const ticket = { counterId: counter.id, jobId: hold.job_id };
        if (await written(hold)) {
          await mutate(this.counters, counter.id, (current) => (holdOf(current, hold.job_id) ? withHolds(current, without(current, hold.job_id)) : null));
          result.committed++;
        } else {
          await mutate(this.counters, ticket.counterId, (current) =>
            holdOf(current, hold.job_id)
              ? { ...withHolds(current, without(current, hold.job_id)), used: Math.max(0, current.used - 1), returned: [...(current.returned ?? []), hold.job_id].slice(-RETURNED_KEPT) }
              : null,
          );
          result.returned++;
        }
      }
    }
    return result;
  }

  async used(tenant: Tenant, now: Date): Promise<number> {
    return (await this.counter(tenant, now)).used;
  }
}
