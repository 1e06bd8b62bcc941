// The outbox relay: publishes the events stored on documents (written by the same write as their
// change) to the bus, then removes them from the document by id with compare-and-set. A crash or a
// broker outage between the two steps republishes (at-least-once); consumers de-duplicate on the
// event id, which is fixed when the event is written. Events go out in occurrence order, keyed by
// account id, so a workspace's events stay ordered on its partition.
import { Event } from '../../../gen/invoicing/events/v1/events';
import { EventBus, TOPICS } from '../../shared/bus/port';
import { toMessage } from '../../shared/events';
import { Logger } from '../../shared/logger';
import { Collection, mutate } from '../../shared/store/port';
import { OutboxSignal } from '../domain/context';
import { DocumentRecord, OutboxEntry } from '../ports/documents-store';

export interface RelayOptions {
  /** How often the outbox is polled besides the wake-ups after each write (catches crashes, outages). */
  intervalMs?: number;
  /** Documents per batch. */
  batch?: number;
}

export function toEvent(doc: Pick<DocumentRecord, 'account_id' | 'livemode'>, entry: OutboxEntry): Event {
  return {
    id: entry.id,
    type: entry.type,
    account_id: doc.account_id,
    livemode: doc.livemode,
    occurred_at: entry.occurred_at,
    ...entry.payload,
  } as Event;
}

export class OutboxRelay implements OutboxSignal {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private failures = 0;
  private readonly intervalMs: number;
  private readonly batch: number;

  constructor(
    private readonly documents: Collection<DocumentRecord>,
    private readonly bus: EventBus,
    private readonly log: Logger,
    options: RelayOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.batch = options.batch ?? 100;
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
      while (!this.stopped && (await this.relayOnce()) >= this.batch);
      this.failures = 0;
    } catch (err) {
      this.failures++;
      this.log.warn({ err: err instanceof Error ? err.message : String(err), failures: this.failures }, 'outbox relay: publish failed; will retry');
    }
  }

  /** Publishes one batch; returns how many documents it took. */
  async relayOnce(): Promise<number> {
    const rows = await this.documents.list({ where: { outbox_pending: true }, limit: this.batch });
    if (rows.length === 0) return 0;
    const entries = rows
      .flatMap((doc) => doc.outbox.map((entry, index) => ({ doc, entry, index })))
      .sort((a, b) => a.entry.occurred_at.localeCompare(b.entry.occurred_at) || a.doc.id - b.doc.id || a.index - b.index);
    await this.bus.publish(TOPICS.documents, entries.map(({ doc, entry }) => toMessage(toEvent(doc, entry))));
    for (const doc of rows) {
      const published = new Set(doc.outbox.map((e) => e.id));
      await mutate(this.documents, doc.id, (current) => {
        const outbox = current.outbox.filter((e) => !published.has(e.id));
        if (outbox.length === current.outbox.length) return null;
        return { ...current, outbox, outbox_pending: outbox.length > 0 ? (true as const) : null };
      });
    }
    return rows.length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.running) await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, 5000))]);
  }
}
