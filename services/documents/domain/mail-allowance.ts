// Recipients per workspace per day (issue #17, "Sending has limits a real mail platform would set"):
// how many addresses (to + cc + bcc) a workspace may mail per UTC calendar day, live and sandbox
// counted apart. The allowance is the plan's `mail_recipients_per_day` quota (identity's subscription,
// passed by the gateway), else the service's default. Metered when `send` is accepted, by a
// compare-and-set on one counter record per (tenant, day): two sends racing for the last recipients
// cannot both get them, whatever the interleaving — the count is checked against the version written.
// A send that then does not happen (invalid input, the invoice gone, a replayed Idempotency-Key) gives
// its recipients back. A crash between taking and writing the invoice loses them for that day: the
// error is on the side of sending less, never more.
import { Collection, CollectionSpec, mutate, UniqueViolation } from '../../shared/store/port';
import { Tenant, tenantKey } from '../../shared/tenant';
import type { MailAllowanceCounter } from '../ports/documents-store';

export type { MailAllowanceCounter };

export const mailAllowanceSpec: CollectionSpec<MailAllowanceCounter> = {
  name: 'mail_recipient_allowance',
  uniqueKeys: (c) => [c.key],
  indexes: [['key']],
};

/**
 * When the plan sets no `mail_recipients_per_day`: enough for a business mailing its invoices (50
 * sends of ten recipients, 500 of one), far from a bulk mailer's volume. Plans raise it.
 */
export const DEFAULT_MAIL_RECIPIENTS_PER_DAY = 500;

export const allowanceDay = (now: Date) => now.toISOString().slice(0, 10);

/** When the day's allowance starts again: the next UTC midnight. */
export const allowanceResetsAt = (now: Date) => `${new Date(Date.parse(allowanceDay(now)) + 86_400_000).toISOString().slice(0, 10)}T00:00:00Z`;

/** The counter with `count` more recipients used; null when that would exceed the allowance. */
export function charged(counter: MailAllowanceCounter, count: number, allowance: number): MailAllowanceCounter | null {
  return counter.used + count <= allowance ? { ...counter, used: counter.used + count } : null;
}

/** Test seams: run between reading the counter and writing it (drive interleavings without sleeps). */
export interface MailAllowanceHooks {
  beforeWrite?(counter: MailAllowanceCounter): Promise<void> | void;
}

export class MailAllowance {
  constructor(
    private readonly counters: Collection<MailAllowanceCounter>,
    private readonly nextId: () => Promise<number>,
    private readonly hooks: MailAllowanceHooks = {},
  ) {}

  private async counter(tenant: Tenant, now: Date): Promise<MailAllowanceCounter> {
    const day = allowanceDay(now);
    const key = `mail:${tenantKey(tenant)}:${day}`;
    const found = await this.counters.findOne({ key });
    if (found) return found;
    try {
      return await this.counters.insert({ id: await this.nextId(), key, account_id: tenant.account_id, livemode: tenant.livemode, day, used: 0 });
    } catch (err) {
      if (!(err instanceof UniqueViolation)) throw err;
      const winner = await this.counters.findOne({ key });
      if (!winner) throw err;
      return winner;
    }
  }

  /** Takes `count` recipients of today's allowance; false (and nothing changes) when they do not fit. */
  async take(tenant: Tenant, count: number, allowance: number, now: Date): Promise<boolean> {
    if (count > allowance) return false;
    const counter = await this.counter(tenant, now);
    let taken = false;
    await mutate(this.counters, counter.id, async (current) => {
      const next = charged(current, count, allowance);
      taken = next !== null;
      if (next) await this.hooks.beforeWrite?.(current);
      return next;
    });
    return taken;
  }

  /** Gives back recipients taken today by a send that then did not happen. */
  async giveBack(tenant: Tenant, count: number, now: Date): Promise<void> {
    const counter = await this.counter(tenant, now);
    await mutate(this.counters, counter.id, (current) => (current.used > 0 ? { ...current, used: Math.max(0, current.used - count) } : null));
  }

  async used(tenant: Tenant, now: Date): Promise<number> {
    return (await this.counter(tenant, now)).used;
  }
}
