// Runs the UploadSweeper (domain/upload-sweeper.ts) at start and every `intervalMs`, off the request
// path, in every expenses process (embedded and distributed); replicas sweeping at once are safe (each
// claim is one insert that only one of them wins).
import { Logger } from '../../shared/logger';
import { UploadSweeper } from '../domain/upload-sweeper';

export class UploadSweepTimer {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly sweeper: UploadSweeper, private readonly log: Logger, private readonly intervalMs: number) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.sweeper.sweep().then(
        (r) => {
          if (r.removed || r.kept) this.log.info(r, 'abandoned uploads swept');
        },
        (err: unknown) => this.log.warn({ err: String(err) }, 'upload sweep failed; will retry'),
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
