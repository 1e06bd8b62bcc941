// Publishes the outcome events stored on delivery records (outbox) to the bus, then removes them by id
// (compare-and-set). At-least-once: the documents service applies an outcome idempotently.
import { Event } from '../../../gen/invoicing/events/v1/events';
import { EventBus, TOPICS } from '../../shared/bus/port';
import { toMessage } from '../../shared/events';
import { Logger } from '../../shared/logger';
import { Collection, mutate } from '../../shared/store/port';
import { DeliveryRecord } from '../ports/mail';

export class DeliveryRelay {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly deliveries: Collection<DeliveryRecord>,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.notify();
      this.timer = setTimeout(tick, this.intervalMs);
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
    this.running = this.relayOnce()
      .catch((err) => this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'delivery relay: publish failed; will retry'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.notify();
        }
      });
  }

  async relayOnce(): Promise<void> {
    const rows = await this.deliveries.list({ where: { outbox_pending: true }, limit: 100 });
    if (rows.length === 0) return;
    const events = rows.flatMap((r) =>
      r.outbox.map((e) => ({ id: e.id, type: e.type, occurred_at: e.occurred_at, account_id: r.account_id, livemode: r.livemode, ...e.payload }) as Event),
    );
    await this.bus.publish(TOPICS.mail, events.map(toMessage));
    for (const row of rows) {
      const published = new Set(row.outbox.map((e) => e.id));
      await mutate(this.deliveries, row.id, (current) => {
        const outbox = current.outbox.filter((e) => !published.has(e.id));
        if (outbox.length === current.outbox.length) return null;
        return { ...current, outbox, outbox_pending: outbox.length ? (true as const) : null };
      });
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.running) await this.running;
  }
}
