// The events log (docs/events.md): every public event stored once, numbered per workspace and mode as it
// is stored, listed newest first with keyset pages. Written by the consumer of the services' topics
// (adapters/events-consumer.ts); read by EventsService and, in the next slice, by webhook deliveries.
import { fail } from '../../shared/errors';
import { CursorCodec, Keyset, PageInput } from '../../shared/pagination';
import { Collection, DuplicateId, mutate, UniqueViolation } from '../../shared/store/port';
import { ownedBy, Tenant, tenantKey } from '../../shared/tenant';
import type { EventFilters, EventRecord, EventSequenceRecord, IncomingEvent } from '../ports/events';
import { publicTypeOf } from './event-types';

export interface EventsLogDeps {
  events: Collection<EventRecord>;
  /** One counter per workspace and mode. */
  sequences: Collection<EventSequenceRecord>;
  nextId: () => Promise<number>;
  clock: { now(): Date };
  /** Test systems only: runs between numbering an event and storing it (a crash or a race there). */
  beforeStore?: (event: IncomingEvent) => Promise<void>;
}

/** Public ids: "evt_" and the outbox event's UUID without its dashes. */
export const publicEventId = (outboxId: string): string => `evt_${outboxId.replace(/-/g, '').toLowerCase()}`;

/**
 * The id of a workspace's mode's counter: 2·account + 1 live, 2·account test. Workspace ids come from a
 * store sequence (far below 2^52), so the id stays exact.
 */
export function sequenceCounterId(tenant: Tenant): number {
  const id = tenant.account_id * 2 + (tenant.livemode ? 1 : 0);
  if (!Number.isSafeInteger(id)) throw new Error(`account id ${tenant.account_id} is too large for an events sequence counter`);
  return id;
}

const TYPE_FILTER = /^[a-z][a-z_]*\.([a-z][a-z_]*)?$/;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** A timestamp bound of the list, normalised to the stored form (toISOString). */
function bound(value: string, field: string): string {
  if (!value) return '';
  // RFC 3339 with a zone (Z or ±hh:mm); Date.parse alone would take many other forms.
  const parsed = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(parsed)) throw fail.invalid('invalid_timestamp', `${field} must be an RFC 3339 date-time with a zone, e.g. 2026-11-28T17:00:00Z`, field);
  return new Date(parsed).toISOString();
}

export class EventsLog {
  constructor(private readonly deps: EventsLogDeps) {}

  /**
   * Stores a bus event if tenants see it; a redelivered one (the same outbox id) is stored once. The
   * number is taken before the insert: a crash or a lost race between the two skips a number, never
   * repeats or reorders one.
   */
  async record(event: IncomingEvent): Promise<EventRecord | null> {
    const type = publicTypeOf(event.type);
    if (!type || !event.object) return null;
    const event_id = publicEventId(event.id);
    const existing = await this.deps.events.findOne({ event_id });
    if (existing) return existing;
    const tenant = { account_id: event.account_id, livemode: event.livemode };
    const { sequence, created_at } = await this.number(tenant);
    await this.deps.beforeStore?.(event);
    try {
      return await this.deps.events.insert({
        id: await this.deps.nextId(),
        event_id,
        ...tenant,
        type,
        kind: type.slice(0, type.indexOf('.')),
        created_at,
        sequence,
        object: event.object,
      });
    } catch (err) {
      // Another consumer stored the same event meanwhile (a redelivery to a second replica).
      if (err instanceof UniqueViolation) return this.deps.events.findOne({ event_id });
      throw err;
    }
  }

  /**
   * The next number of the workspace's mode and its created_at, taken together by compare-and-set: the
   * clock, or one millisecond after the previous event when the clock is behind it (another replica's
   * clock, the same millisecond). So created_at strictly grows with sequence, and listing by time is
   * listing by number.
   */
  private async number(tenant: Tenant): Promise<{ sequence: number; created_at: string }> {
    const id = sequenceCounterId(tenant);
    for (;;) {
      let taken = { sequence: 0, created_at: '' };
      const written = await mutate(this.deps.sequences, id, (counter) => {
        const now = this.deps.clock.now().toISOString();
        const created_at = now > counter.last_at ? now : new Date(Date.parse(counter.last_at) + 1).toISOString();
        taken = { sequence: counter.sequence + 1, created_at };
        return { ...counter, sequence: taken.sequence, last_at: created_at };
      });
      if (written) return taken;
      // The workspace's first event: its counter starts at 0 (a concurrent first event may create it too).
      await this.deps.sequences.insert({ id, sequence: 0, last_at: '' }).catch((err: unknown) => {
        if (!(err instanceof DuplicateId)) throw err;
      });
    }
  }

  async get(tenant: Tenant, id: string): Promise<EventRecord> {
    const record = id.startsWith('evt_') ? await this.deps.events.findOne({ event_id: id }) : null;
    if (!record || !ownedBy(record, tenant)) throw fail.notFound('event');
    return record;
  }

  /** Newest first: created_at, then id, descending. */
  async list(tenant: Tenant, filters: EventFilters, page: PageInput | undefined, cursors: CursorCodec) {
    if (filters.type && !TYPE_FILTER.test(filters.type)) {
      throw fail.invalid('invalid_event_type', 'type must be an event type (invoice.paid) or a prefix ending in a dot (invoice.)', 'type');
    }
    const gte = bound(filters.created_at_gte, 'created_at[gte]');
    const gt = bound(filters.created_at_gt, 'created_at[gt]');
    const lte = bound(filters.created_at_lte, 'created_at[lte]');
    const lt = bound(filters.created_at_lt, 'created_at[lt]');
    const filterKey = `events|${tenantKey(tenant)}|${filters.type}|${gte}|${gt}|${lte}|${lt}`;
    const resolved = cursors.resolve(page, filterKey);
    const prefix = filters.type.endsWith('.');
    const where = {
      account_id: tenant.account_id,
      livemode: tenant.livemode,
      ...(filters.type ? (prefix ? { kind: filters.type.slice(0, -1) } : { type: filters.type }) : {}),
    };
    // The upper bound is a keyset position (rows strictly after it in the descending order); a cursor
    // is always inside it. The lower bound ends the list: rows below it all come after the rows above.
    const after = resolved.after ?? upperBound(lte, lt);
    const rows = await this.deps.events.list({ where, orderBy: ['created_at'], after, limit: resolved.limit + 1 });
    const inRange = rows.filter((r) => (!gte || r.created_at >= gte) && (!gt || r.created_at > gt));
    return cursors.page(inRange, resolved.limit, (r): Keyset => [r.created_at, r.id], filterKey);
  }
}

/** The keyset position just above the newest row a `lte` / `lt` bound admits (the tighter of the two). */
function upperBound(lte: string, lt: string): Keyset | undefined {
  const positions: Keyset[] = [];
  if (lte) positions.push([lte, MAX_SAFE]);
  if (lt) positions.push([lt, 0]);
  if (positions.length === 0) return undefined;
  return positions.sort((a, b) => (a[0] === b[0] ? Number(a[1]) - Number(b[1]) : a[0] < b[0] ? -1 : 1))[0];
}
