// Drives the ExtractionRunner off the request path: wakes on expenses.extraction.requested (durable
// group on invoicing.expenses.v1, from the beginning; the event id de-duplicates redeliveries), scans
// the store for due jobs at start (recovery: jobs left `processing` by a dead process, `pending` jobs
// whose event was lost) and every pollMs, and runs at most `concurrency` jobs at once. The store is the
// queue: an event only says "look now".
import { EventBus, Subscription, TOPICS } from '../../shared/bus/port';
import { fromMessage } from '../../shared/events';
import { Logger } from '../../shared/logger';
import { EXTRACTION_REQUESTED } from '../domain/expense-files';
import { ExtractionRunner } from '../domain/extraction-runner';

/** Every replica of the expenses service shares it: each job event is taken by one of them. */
export const EXTRACTION_CONSUMER_GROUP = 'expenses.extraction';
const SEEN_EVENTS = 10_000;

export interface WorkerOptions {
  concurrency: number;
  pollMs: number;
}

export class ExtractionWorker {
  private subscription?: Subscription;
  private timer?: NodeJS.Timeout;
  private readonly queued = new Map<string, { expenseId: number; jobId: string }>();
  private readonly seen = new Set<string>();
  private active = 0;
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly runner: ExtractionRunner,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly options: WorkerOptions,
  ) {}

  async start(): Promise<void> {
    this.subscription = await this.bus.subscribe(TOPICS.expenses, { group: EXTRACTION_CONSUMER_GROUP, fromBeginning: true }, async (message) => {
      const event = fromMessage(message);
      const job = event.extraction_requested;
      if (event.type !== EXTRACTION_REQUESTED || !job || this.seen.has(event.id)) return;
      this.remember(event.id);
      this.enqueue(job.expense_id, job.job_id);
    });
    const tick = () => {
      if (this.stopped) return;
      this.scan();
      this.timer = setTimeout(tick, this.options.pollMs);
      this.timer.unref();
    };
    tick();
  }

  private remember(eventId: string): void {
    this.seen.add(eventId);
    if (this.seen.size > SEEN_EVENTS) this.seen.delete(this.seen.values().next().value!);
  }

  /** The recovery scan: every due job in the store. */
  scan(): void {
    this.runner.dueJobs().then(
      (jobs) => jobs.forEach((j) => this.enqueue(j.expenseId, j.jobId)),
      (err: unknown) => this.log.warn({ err: String(err) }, 'extraction scan failed; will retry'),
    );
  }

  enqueue(expenseId: number, jobId: string): void {
    if (this.stopped) return;
    this.queued.set(`${expenseId}:${jobId}`, { expenseId, jobId });
    this.pump();
  }

  private pump(): void {
    while (!this.stopped && this.active < this.options.concurrency && this.queued.size > 0) {
      const [key, job] = this.queued.entries().next().value!;
      this.queued.delete(key);
      this.active++;
      const run = this.runner
        .run(job.expenseId, job.jobId)
        .then(
          (outcome) => this.log.info({ expense_id: job.expenseId, job_id: job.jobId, outcome }, 'extraction job'),
          (err: unknown) => this.log.warn({ err: String(err), expense_id: job.expenseId, job_id: job.jobId }, 'extraction job interrupted; it is taken again when its lease lapses'),
        )
        .finally(() => {
          this.active--;
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.subscription?.close();
    // Jobs still running keep their claims; a restarted process takes them again after their lease.
    await Promise.race([Promise.all(this.running), new Promise((resolve) => setTimeout(resolve, 2000))]);
  }
}
