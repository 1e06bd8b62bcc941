// The outbox relay, shared by every service that keeps an outbox (see entries.ts): publishes the events
// stored on records to the bus, then removes them from their record by id with compare-and-set. A crash or
// a broker outage between the two steps republishes (at-least-once); consumers de-duplicate on the event
// id, fixed when the event is written.
//
// Order: records with the oldest pending events first; each record's events in the order they were
// written (their `seq`, never a clock); across records, interleaved by occurrence time. Messages are keyed
// by account id, so a workspace's events stay in that order on its partition.
//
// Backlog: a producer call carries at most `maxBatchBytes` (kafkajs does not split a batch that exceeds
// the broker's message.max.bytes, it would fail on every attempt). An event that can never be published —
// larger than a batch may be, or refused by the broker as a record — is set aside as a dead letter (kept
// on its record, logged at error, counted) instead of blocking every event behind it.
import { Event, ResourceSnapshot } from '../../../gen/invoicing/events/v1/events';
import { BusMessage, EventBus, MessagesRejected } from '../bus/port';
import { DomainError } from '../errors';
import { toMessage } from '../events';
import { Logger } from '../logger';
import { Collection, mutate, StoredDoc } from '../store/port';
import { DeadLetterNote, OutboxEntry, OutboxFields, pendingInOrder, settleOutbox } from './entries';
import { countDeadLetter, countPublished, watchOutboxes } from './metrics';

// `any`: a source's payload type is its own business; the relay only copies it into the envelope.
type AnyOutboxRecord = StoredDoc & Partial<OutboxFields<any>>;

export interface OutboxSource<T extends AnyOutboxRecord> {
  /** Names the source in logs. */
  name: string;
  collection: Collection<T>;
  topic: string;
  /** Envelope fields taken from the record: the workspace the event belongs (and is keyed) to. */
  envelope(record: T): { account_id: number; livemode: boolean };
  /**
   * The tenant-visible resource of an event that carries its record's snapshot (`entry.object`), as the
   * service's Get answers it (docs/events.md): the service's own record → message mapping. May read
   * (a record's joins); a failure leaves the batch for the next round, like a broker outage.
   */
  resource?(object: Record<string, unknown>, record: T): Promise<ResourceSnapshot | undefined>;
}

/** A source of any record type (the relay treats payloads as opaque). */
export type AnyOutboxSource = OutboxSource<AnyOutboxRecord>;

export interface RelayOptions {
  /** How often the outbox is polled besides the wake-ups after each write (catches crashes, outages). */
  intervalMs?: number;
  /** Records per batch. */
  batch?: number;
  /** Upper bound of one producer call's encoded size (keys, values and record overhead). */
  maxBatchBytes?: number;
}

/**
 * Half of Kafka's default message.max.bytes (1 MiB, which bounds a partition's record batch): room for the
 * record format's own overhead and for a broker configured a little tighter.
 */
export const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;
/** Upper bounds of Kafka's per-record (lengths, offset and timestamp deltas, attributes) and per-batch overhead. */
const RECORD_OVERHEAD = 64;
const BATCH_OVERHEAD = 128;

/** The envelope of an outbox entry: id, type and time as written, the record's sequence, the payload. */
export function outboxEvent(entry: OutboxEntry, envelope: { account_id: number; livemode: boolean }, resource?: ResourceSnapshot): Event {
  return { id: entry.id, type: entry.type, occurred_at: entry.occurred_at, sequence: entry.seq ?? 0, ...envelope, resource, ...entry.payload } as Event;
}

interface Item {
  record: AnyOutboxRecord;
  entry: OutboxEntry;
  message: BusMessage;
}

export interface RelayCounts {
  published: number;
  dead_lettered: number;
}

export class OutboxRelay {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private failures = 0;
  private readonly intervalMs: number;
  private readonly batch: number;
  private readonly maxBatchBytes: number;
  /** Events published and set aside since start (dead letters are also logged at error). */
  readonly counts: RelayCounts = { published: 0, dead_lettered: 0 };
  private readonly unwatch: () => void;

  constructor(
    private readonly sources: AnyOutboxSource[],
    private readonly bus: EventBus,
    private readonly log: Logger,
    options: RelayOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.batch = options.batch ?? 100;
    this.maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
    this.unwatch = watchOutboxes(sources);
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.notify();
      // Back off while publishing fails (the broker is down), up to 10 s.
      this.timer = setTimeout(tick, Math.min(this.intervalMs * 2 ** Math.min(this.failures, 4), 10_000));
      this.timer.unref();
    };
    this.timer = setTimeout(tick, this.intervalMs);
    this.timer.unref();
  }

  /** Wakes the relay after a write that carries events. */
  notify(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped && this.failures === 0) {
        this.again = false;
        this.notify();
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.relayOnce()) > 0);
      this.failures = 0;
    } catch (err) {
      this.failures++;
      this.log.warn({ err: err instanceof Error ? err.message : String(err), failures: this.failures }, 'outbox relay: publish failed; will retry');
    }
  }

  /** Relays one batch of every source; returns how many events left their outboxes (published or set aside). */
  async relayOnce(): Promise<number> {
    let taken = 0;
    for (const source of this.sources) taken += await this.relaySource(source);
    return taken;
  }

  private async relaySource(source: OutboxSource<AnyOutboxRecord>): Promise<number> {
    const rows = await source.collection.list({ where: { outbox_pending: true }, orderBy: ['outbox_order'], limit: this.batch });
    if (rows.length === 0) return 0;
    const resources = await this.resources(source, rows);
    const { batch, tooLarge } = this.select(source, rows, resources);
    const published: Item[] = [];
    const dead = new Map<Item, DeadLetterNote>();
    for (const item of tooLarge) {
      dead.set(item, { reason: 'too_large', detail: `${item.message.value.length} bytes encoded; a batch holds at most ${this.maxBatchBytes}`, dead_at: new Date().toISOString() });
    }
    try {
      await this.publish(source.topic, batch, published, dead);
    } finally {
      // Whatever happened, what did go out (or aside) leaves the outbox, so a retry does not repeat it.
      await this.settle(source, published, dead);
    }
    return published.length + dead.size;
  }

  /**
   * The resources of the pending events that carry a snapshot, by event id. A mapping the service refuses
   * for good (a DomainError: a join it may not read) must not block every event behind it: that event goes
   * out without its resource, logged at error. Anything else (the store unreachable) fails the round.
   */
  private async resources(source: OutboxSource<AnyOutboxRecord>, rows: AnyOutboxRecord[]): Promise<Map<string, ResourceSnapshot>> {
    const found = new Map<string, ResourceSnapshot>();
    if (!source.resource) return found;
    for (const record of rows) {
      for (const entry of record.outbox ?? []) {
        if (!entry.object) continue;
        try {
          const resource = await source.resource(entry.object, record);
          if (resource) found.set(entry.id, resource);
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          this.log.error({ source: source.name, record_id: record.id, event_id: entry.id, type: entry.type, err: err.message }, 'outbox relay: the event’s resource cannot be mapped; published without it');
        }
      }
    }
    return found;
  }

  /**
   * The next batch: the rows' events merged by occurrence time, each row's in its own order, up to the
   * byte bound. An event that alone exceeds the bound can never go out: it is returned to be set aside.
   */
  private select(source: OutboxSource<AnyOutboxRecord>, rows: AnyOutboxRecord[], resources: Map<string, ResourceSnapshot>): { batch: Item[]; tooLarge: Item[] } {
    // Ties of occurrence time (a millisecond's clock resolution) go to the older record.
    const queues = [...rows].sort((a, b) => a.id - b.id).map((record) => ({ record, entries: pendingInOrder(record), next: 0 }));
    const batch: Item[] = [];
    const tooLarge: Item[] = [];
    let bytes = BATCH_OVERHEAD;
    for (;;) {
      let head: (typeof queues)[number] | undefined;
      for (const q of queues) {
        if (q.next < q.entries.length && (!head || q.entries[q.next].occurred_at < head.entries[head.next].occurred_at)) head = q;
      }
      if (!head) break;
      const entry = head.entries[head.next];
      const message = toMessage(outboxEvent(entry, source.envelope(head.record), resources.get(entry.id)));
      // The publication joins the trace of the request that wrote the event (tracing on only).
      if (entry.trace) message.headers = { traceparent: entry.trace };
      const size = message.value.length + Buffer.byteLength(message.key) + RECORD_OVERHEAD;
      if (BATCH_OVERHEAD + size > this.maxBatchBytes) {
        tooLarge.push({ record: head.record, entry, message });
      } else if (bytes + size > this.maxBatchBytes) {
        break; // the rest waits for the next batch; stopping here keeps every record's order
      } else {
        batch.push({ record: head.record, entry, message });
        bytes += size;
      }
      head.next++;
    }
    return { batch, tooLarge };
  }

  /**
   * Publishes the items in order. A permanent refusal of several items is narrowed down by halves (in
   * order, so each record's order holds) to the items refused alone, which are set aside.
   */
  private async publish(topic: string, items: Item[], published: Item[], dead: Map<Item, DeadLetterNote>): Promise<void> {
    if (items.length === 0) return;
    try {
      await this.bus.publish(topic, items.map((i) => i.message));
      published.push(...items);
    } catch (err) {
      if (!(err instanceof MessagesRejected)) throw err;
      if (items.length === 1) {
        dead.set(items[0], { reason: 'rejected', detail: err.reason, dead_at: new Date().toISOString() });
        return;
      }
      const half = Math.ceil(items.length / 2);
      await this.publish(topic, items.slice(0, half), published, dead);
      await this.publish(topic, items.slice(half), published, dead);
    }
  }

  private async settle(source: OutboxSource<AnyOutboxRecord>, published: Item[], dead: Map<Item, DeadLetterNote>): Promise<void> {
    this.counts.published += published.length;
    countPublished(source.name, published.length);
    for (const [item, note] of dead) {
      this.counts.dead_lettered++;
      countDeadLetter(source.name, note.reason);
      this.log.error(
        { source: source.name, record_id: item.record.id, event_id: item.entry.id, type: item.entry.type, reason: note.reason, detail: note.detail, dead_letters_total: this.counts.dead_lettered },
        'outbox relay: event can never be published; set aside as a dead letter',
      );
    }
    const byRecord = new Map<number, { published: Set<string>; dead: Map<string, DeadLetterNote> }>();
    const of = (item: Item) => {
      const settled = byRecord.get(item.record.id) ?? { published: new Set<string>(), dead: new Map<string, DeadLetterNote>() };
      byRecord.set(item.record.id, settled);
      return settled;
    };
    for (const item of published) of(item).published.add(item.entry.id);
    for (const [item, note] of dead) of(item).dead.set(item.entry.id, note);
    for (const [id, settled] of byRecord) {
      await mutate(source.collection, id, (current) => settleOutbox(current, settled.published, settled.dead));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch();
    if (this.timer) clearTimeout(this.timer);
    if (this.running) await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, 5000))]);
  }
}
