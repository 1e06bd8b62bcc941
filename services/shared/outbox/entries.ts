// The transactional outbox, record side (pure, importable by domain code): a change's events are stored on
// the very record it changes, by the same single-document write, so an event exists iff its change
// committed. The relay (relay.ts) publishes them and removes them by id. Every service that publishes
// events after a write uses this, not a bus call after the write (which a bus outage or a crash loses).

/** An event waiting in a record's outbox. */
export interface OutboxEntry<P = Record<string, unknown>> {
  /** UUID, fixed when the event is written: stable across redeliveries (consumers de-duplicate on it). */
  id: string;
  type: string;
  /** RFC 3339 from the writer's clock: informative, never an ordering key across replicas. */
  occurred_at: string;
  /**
   * Position among the record's events (1, 2, …), assigned by the write that appends the event, so it is
   * the order the changes were written in. Absent on entries written before it existed: their order in
   * the outbox array is the same order.
   */
  seq?: number;
  /** The event's payload fields (one member of the envelope's `payload` oneof). */
  payload: P;
  /** W3C traceparent of the traced request that wrote it (tracing on only): its publication joins that trace. */
  trace?: string;
  /**
   * The record as this change left it (its outbox fields left out), on the events a tenant sees: the
   * relay turns it into the event's `resource` (docs/events.md). Taken by the write itself, so it is the
   * state this change produced, not whatever the record holds when the relay gets to it.
   */
  object?: Record<string, unknown>;
}

/** Why an event was set aside: it can never be published, and must not block the events behind it. */
export type DeadLetterReason = 'too_large' | 'rejected';

export interface DeadLetter<P = Record<string, unknown>> extends OutboxEntry<P> {
  reason: DeadLetterReason;
  detail: string;
  /** When the relay set it aside (RFC 3339). */
  dead_at: string;
}

export type DeadLetterNote = Pick<DeadLetter, 'reason' | 'detail' | 'dead_at'>;

/** The outbox fields of a record that carries one. */
export interface OutboxFields<P = Record<string, unknown>> {
  outbox: OutboxEntry<P>[];
  /** True while the outbox is not empty (an equality-queryable flag for the relay); null otherwise. */
  outbox_pending: true | null;
  /**
   * Oldest-first sort key of the pending events: minus the epoch milliseconds of the oldest one (the store
   * lists descending only, so the most negative — the oldest — comes first); null when nothing is pending.
   * It decides only which records the relay takes first, never the order of a record's own events.
   */
  outbox_order?: number | null;
  /** The last `seq` handed out on this record (absent: none yet). */
  outbox_seq?: number;
  /** Events the relay could never publish, kept for an operator (see docs/documents.md, Events). */
  outbox_dead?: DeadLetter<P>[];
}

function orderKey(entries: Array<Pick<OutboxEntry, 'occurred_at'>>): number | null {
  if (entries.length === 0) return null;
  const times = entries.map((e) => Date.parse(e.occurred_at)).filter((t) => Number.isFinite(t));
  return times.length ? -Math.min(...times) : 0;
}

/** Appends events to a record's outbox, numbering them after the record's previous events. */
let traceOf: (() => string | undefined) | undefined;

/** Set by the tracing bootstrap (services/shared/observability/tracing.ts): the active request's traceparent. */
export function traceOutboxWith(source: (() => string | undefined) | undefined): void {
  traceOf = source;
}

// A record type may declare the fields optional (`Partial<OutboxFields>`): records written before it kept an
// outbox have none, which reads as an empty outbox.
export function appendToOutbox<T extends Partial<OutboxFields<any>>>(record: T, entries: Array<Omit<NonNullable<T['outbox']>[number], 'seq'>>): T {
  if (entries.length === 0) return record;
  let seq = record.outbox_seq ?? 0;
  const trace = traceOf?.();
  const outbox = [...(record.outbox ?? []), ...entries.map((e) => ({ ...e, seq: ++seq, ...(trace ? { trace } : {}) }))];
  return { ...record, outbox, outbox_pending: true, outbox_order: orderKey(outbox), outbox_seq: seq };
}

const OUTBOX_FIELDS = new Set(['outbox', 'outbox_pending', 'outbox_order', 'outbox_seq', 'outbox_dead']);

/** The record without its outbox: what a tenant's event carries as the resource (docs/events.md). */
export function snapshotOf(record: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([field]) => !OUTBOX_FIELDS.has(field)));
}

/**
 * Appends events that carry the record as this write leaves it (`object`): the events a tenant sees.
 * Pass the record exactly as it is written; fields added after (idempotency tokens) are not shown anyway.
 */
export function appendWithSnapshot<T extends Partial<OutboxFields<any>>>(record: T, entries: Array<Omit<NonNullable<T['outbox']>[number], 'seq'>>): T {
  const object = snapshotOf(record);
  return appendToOutbox(record, entries.map((e) => ({ ...e, object })));
}

/** The record's pending events in the order they were written. */
export function pendingInOrder<E extends OutboxEntry<unknown>>(record: { outbox?: E[] }): E[] {
  return (record.outbox ?? [])
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => (a.entry.seq ?? 0) - (b.entry.seq ?? 0) || a.index - b.index)
    .map(({ entry }) => entry);
}

/**
 * The record after the relay published `published` and set `dead` aside: both leave the outbox (matched by
 * id, so events appended meanwhile stay), dead letters are kept. Null when there is nothing to change.
 */
export function settleOutbox<T extends Partial<OutboxFields<any>>>(record: T, published: Set<string>, dead: Map<string, DeadLetterNote>): T | null {
  const current = record.outbox ?? [];
  const outbox = current.filter((e) => !published.has(e.id) && !dead.has(e.id));
  if (outbox.length === current.length) return null;
  const buried = current.filter((e) => dead.has(e.id)).map((e) => ({ ...e, ...dead.get(e.id)! }));
  return {
    ...record,
    outbox,
    outbox_pending: outbox.length > 0 ? true : null,
    outbox_order: orderKey(outbox),
    ...(buried.length ? { outbox_dead: [...(record.outbox_dead ?? []), ...buried] } : {}),
  };
}
