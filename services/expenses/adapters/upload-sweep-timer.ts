// Runs the UploadSweeper (domain/upload-sweeper.ts) and the settling of quota holds left by dead
// requests (domain/extraction-quota.ts reconcile) at start and every `intervalMs`, off the request path,
// in every expenses process (embedded and distributed); replicas sweeping at once are safe (each claim
// is one insert that only one of them wins; each hold is settled by one compare-and-set).
import { Logger } from '../../shared/logger';
import { UploadSweeper } from '../domain/upload-sweeper';

export class UploadSweepTimer {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly sweeper: UploadSweeper,
    private readonly reconcileQuota: () => Promise<{ committed: number; returned: number }>,
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.sweeper.sweep().then(
        (r) => {
          if (r.removed || r.kept) this.log.info(r, 'abandoned uploads swept');
        },
        (err: unknown) => this.log.warn({ err: String(err) }, 'upload sweep failed; will retry'),
      ).then(() =>
        this.reconcileQuota().then(
          (r) => {
            if (r.committed || r.returned) this.log.info(r, 'extraction quota holds settled');
          },
          (err: unknown) => this.log.warn({ err: String(err) }, 'quota hold settling failed; will retry'),
        ),
      );
      this.timer = setTimeout(tick, this.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
