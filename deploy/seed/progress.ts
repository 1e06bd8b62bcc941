// Progress of a long seeding run on stderr: rows written per kind, rows per second and the time left,
// at most one line every `everyMs` (a run of millions of rows prints a few hundred lines, not millions).
export class Progress {
  private readonly started = Date.now();
  private written = 0;
  private phaseName = '';
  private phaseTotal = 0;
  private phaseWritten = 0;
  private lastLine = 0;

  constructor(
    private readonly total: number,
    private readonly write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
    private readonly everyMs = 2_000,
  ) {}

  phase(name: string, total: number): void {
    this.phaseName = name;
    this.phaseTotal = total;
    this.phaseWritten = 0;
    this.line();
  }

  advance(rows: number): void {
    this.written += rows;
    this.phaseWritten += rows;
    if (Date.now() - this.lastLine >= this.everyMs) this.line();
  }

  /** The closing line: everything written, in how long. */
  done(): void {
    const seconds = (Date.now() - this.started) / 1000;
    this.write(`seed: done: ${this.written.toLocaleString('en')} rows in ${duration(seconds)} (${Math.round(this.written / Math.max(seconds, 0.001)).toLocaleString('en')} rows/s)`);
  }

  private line(): void {
    this.lastLine = Date.now();
    const seconds = (this.lastLine - this.started) / 1000;
    const rate = this.written / Math.max(seconds, 0.001);
    const left = rate > 0 ? (this.total - this.written) / rate : NaN;
    const share = this.total ? Math.floor((100 * this.written) / this.total) : 100;
    this.write(
      `seed: ${this.phaseName} ${this.phaseWritten.toLocaleString('en')}/${this.phaseTotal.toLocaleString('en')} · ` +
        `${Math.round(rate).toLocaleString('en')} rows/s · ${share}% of ${this.total.toLocaleString('en')} · ETA ${Number.isFinite(left) ? duration(left) : '?'}`,
    );
  }
}

export function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
