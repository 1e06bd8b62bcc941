// Drives the ExtractionRunner off the request path. The store is the queue (domain/extraction-queue.ts):
// whenever this process has a free slot (`concurrency`), it asks the queue for the next job — per
// workspace in turn, under each workspace's cap — runs it, frees its slot and asks again. It looks:
// on every expenses.extraction.requested event (each replica has a consumer group of its own, so every
// replica with a free slot hears of new work at once), after every job it ran, at start and every
// pollMs (the queue's repair scan: jobs left `processing` by a dead process, lanes a dead process did
// not touch). An event only says "look now".
import { randomUUID } from 'node:crypto';
import { EventBus, Subscription, TOPICS } from '../../shared/bus/port';
import { fromMessage } from '../../shared/events';
import { Logger } from '../../shared/logger';
import { EXTRACTION_REQUESTED } from '../domain/expense-files';
import { ExtractionQueue, TakenJob } from '../domain/extraction-queue';
import { ExtractionRunner } from '../domain/extraction-runner';

/** The prefix of each replica's own consumer group (broadcast: every replica sees every job event). */
export const EXTRACTION_CONSUMER_GROUP = 'expenses.extraction';

export interface WorkerOptions {
  /** Jobs this process runs at once (EXTRACTION_CONCURRENCY). */
  concurrency: number;
  pollMs: number;
}

export class ExtractionWorker {
  private subscription?: Subscription;
  private timer?: NodeJS.Timeout;
  private active = 0;
  private picking = false;
  private lookAgain = false;
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly runner: ExtractionRunner,
    private readonly queue: ExtractionQueue,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly options: WorkerOptions,
  ) {}

  async start(): Promise<void> {
    this.subscription = await this.bus.subscribe(TOPICS.expenses, { group: `${EXTRACTION_CONSUMER_GROUP}.${randomUUID()}` }, async (message) => {
      if (fromMessage(message).type === EXTRACTION_REQUESTED) this.pump();
    });
    const tick = () => {
      if (this.stopped) return;
      this.queue.repair().then(
        () => this.pump(),
        (err: unknown) => this.log.warn({ err: String(err) }, 'extraction scan failed; will retry'),
      );
      this.timer = setTimeout(tick, this.options.pollMs);
      this.timer.unref();
    };
    tick();
  }

  /** Fills free slots from the queue; one pick at a time per process (a call meanwhile makes it look again). */
  pump(): void {
    if (this.stopped) return;
    if (this.picking) {
      this.lookAgain = true;
      return;
    }
    if (this.active >= this.options.concurrency) return;
    this.picking = true;
    void this.fill()
      .catch((err: unknown) => this.log.warn({ err: String(err) }, 'extraction pick failed; will retry'))
      .finally(() => {
        this.picking = false;
        if (this.lookAgain) {
          this.lookAgain = false;
          this.pump();
        }
      });
  }

  private async fill(): Promise<void> {
    while (!this.stopped && this.active < this.options.concurrency) {
      this.lookAgain = false;
      const job = await this.queue.next();
      if (!job) return;
      this.run(job);
    }
  }

  private run(job: TakenJob): void {
    this.active++;
    const run = this.runner
      .run(job.expenseId, job.jobId)
      .then(
        (outcome) => this.log.info({ expense_id: job.expenseId, job_id: job.jobId, outcome }, 'extraction job'),
        (err: unknown) => this.log.warn({ err: String(err), expense_id: job.expenseId, job_id: job.jobId }, 'extraction job interrupted; it is taken again when its lease lapses'),
      )
      .then(() => this.queue.release(job))
      .catch((err: unknown) => this.log.warn({ err: String(err), job_id: job.jobId }, 'extraction slot not released; it lapses with its lease'))
      .finally(() => {
        this.active--;
        this.running.delete(run);
        this.pump();
      });
    this.running.add(run);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.subscription?.close();
    // Jobs still running keep their claims; a restarted process takes them again after their lease.
    await Promise.race([Promise.all(this.running), new Promise((resolve) => setTimeout(resolve, 2000))]);
  }
}
