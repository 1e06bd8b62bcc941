// Drives the Mailer: consumes documents.invoice.send_requested from the bus (durable group, at-least-once;
// the offset moves only after the delivery is recorded) and attempts due deliveries — right after a
// request arrives and on a timer, which also picks up retries and deliveries left by a crash.
import { Event } from '../../../gen/invoicing/events/v1/events';
import { EventBus, Subscription, TOPICS } from '../../shared/bus/port';
import { fromMessage } from '../../shared/events';
import { Logger } from '../../shared/logger';
import { Mailer } from '../domain/mailer';
import type { SendRequest } from '../ports/mail';

export const SEND_REQUESTED = 'documents.invoice.send_requested';
/** Every replica of the rendering service shares it: each request is taken by one of them. */
export const MAIL_CONSUMER_GROUP = 'rendering.mail';

export function sendRequestOf(event: Event): SendRequest | null {
  const p = event.invoice_send_requested;
  if (event.type !== SEND_REQUESTED || !p) return null;
  return {
    id: event.id,
    account_id: event.account_id,
    livemode: event.livemode,
    document_id: p.document_id,
    number: p.number,
    to: p.to,
    cc: p.cc,
    bcc: p.bcc,
    subject: p.subject,
    message: p.message,
    locale: p.locale,
    requested_at: p.requested_at,
  };
}

export class MailWorker {
  private subscription?: Subscription;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly mailer: Mailer,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly options: { pollMs: number },
  ) {}

  async start(): Promise<void> {
    this.subscription = await this.bus.subscribe(TOPICS.documents, { group: MAIL_CONSUMER_GROUP, fromBeginning: true }, async (message) => {
      const request = sendRequestOf(fromMessage(message));
      if (!request) return;
      await this.mailer.accept(request);
      this.kick();
    });
    const tick = () => {
      if (this.stopped) return;
      this.kick();
      this.timer = setTimeout(tick, this.options.pollMs);
      this.timer.unref();
    };
    tick();
  }

  /** Runs a dispatch round now (or right after the one in progress). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.mailer
      .dispatchDue()
      .then(
        () => undefined,
        (err) => this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'mail dispatch failed; will retry'),
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.subscription?.close();
    if (this.running) await Promise.race([this.running, new Promise((resolve) => setTimeout(resolve, 5000))]);
  }
}
