// Admission control at the entry of an issue (docs/documents.md, "Issuing at volume: admission"). The
// per-sequence queue sheds what it cannot number in time, but an issue spends most of its time before
// it: reading the draft, the identity/contacts snapshots, the number format, a credit reservation — on a
// slow store (FerretDB serialises writes) that work alone outlived the gateway's 10 s under a burst.
// So the decision is taken first, before any of it: a request is admitted only if the issues already
// admitted in this process, at the pace issues completed recently, leave it time to finish before its
// caller's deadline minus a margin; otherwise it is refused at once with 503 `issuing_overloaded` and
// Retry-After — retryable, nothing applied. Nothing admitted waits for a slot: there is no queue here.
//
// The pace is measured, not configured: busy milliseconds per completed issue (time with nothing in
// flight is not counted), both decayed over PACE_MEMORY_MS of busy time, so the pace follows the store
// within seconds and completions that arrive together (a batch) count as what they are — many issues in
// that time. Until one issue has completed in a process the pace is unknown and at most
// `initialInFlight` are admitted. The busy time since the last completion counts too (as if one issue
// completed now), so a store that stalls in the middle of a burst makes the next arrivals refused at once.
import { fail } from '../../shared/errors';

export interface AdmissionOptions {
  /** Most issues in flight per process, whatever the pace (ISSUE_ADMIT_MAX, default 200). */
  maxInFlight: number;
  /** Most issues in flight before one has completed and the pace is known (ISSUE_ADMIT_INITIAL, default 10). */
  initialInFlight: number;
  /** Time an admitted issue must be expected to have left before its deadline (ISSUE_ADMIT_MARGIN_MS, default 2000; at most half the time left). */
  marginMs: number;
  /** ms since the epoch (the same clock as the callers' deadlines); tests pass a fake one. */
  now?: () => number;
}

export const ADMISSION_DEFAULTS: AdmissionOptions = { maxInFlight: 200, initialInFlight: 10, marginMs: 2000 };

/** Busy time over which old completions fade (e^-1): the pace reflects roughly the last seconds of work. */
export const PACE_MEMORY_MS = 2000;

export class Admission {
  private readonly now: () => number;
  private inFlight = 0;
  /** Busy ms and completions, both decayed by busy time; the pace is their ratio. */
  private busyMs = 0;
  private completions = 0;
  /** When busy time was last accounted (the last completion, or when the process became busy). */
  private accountedAt = 0;

  constructor(private readonly options: AdmissionOptions = ADMISSION_DEFAULTS) {
    this.now = options.now ?? Date.now;
  }

  /** Runs `work` if admitted (see the file's comment); otherwise throws 503 issuing_overloaded without running it. */
  async run<R>(deadline: number | undefined, work: () => Promise<R>): Promise<R> {
    this.admit(deadline);
    try {
      return await work();
    } finally {
      this.complete();
    }
  }

  /** Issues admitted and not yet completed. */
  get admitted(): number {
    return this.inFlight;
  }

  /** The expected time from now until one more issue admitted now completes, or undefined while unknown. */
  expectedMs(): number | undefined {
    if (this.completions === 0) return undefined;
    const pace = this.busyMs / this.completions;
    // The pace were one issue to complete right now: higher than the measured one when the store stalls.
    const { busyMs, completions } = this.accounted(this.now());
    return (this.inFlight + 1) * Math.max(pace, busyMs / (completions + 1));
  }

  private admit(deadline: number | undefined): void {
    const now = this.now();
    if (this.inFlight >= this.options.maxInFlight) throw overloaded();
    const expected = this.expectedMs();
    if (expected === undefined) {
      if (this.inFlight >= this.options.initialInFlight) throw overloaded();
    } else if (deadline !== undefined) {
      const left = deadline - now;
      if (expected > left - Math.min(this.options.marginMs, left / 2)) throw overloaded();
    }
    if (this.inFlight === 0) this.accountedAt = now; // idle time is not busy time
    this.inFlight++;
  }

  private complete(): void {
    ({ busyMs: this.busyMs, completions: this.completions } = this.accounted(this.now()));
    this.accountedAt = this.now();
    this.completions += 1;
    this.inFlight--;
  }

  /** Busy time and completions decayed up to `now` (busy since `accountedAt` while anything is in flight). */
  private accounted(now: number): { busyMs: number; completions: number } {
    const busy = this.inFlight > 0 ? Math.max(0, now - this.accountedAt) : 0;
    const decay = Math.exp(-busy / PACE_MEMORY_MS);
    return { busyMs: this.busyMs * decay + busy, completions: this.completions * decay };
  }
}

const overloaded = () =>
  fail.unavailable('issuing_overloaded', 'too many issues are in progress to finish this one before its deadline; retry after Retry-After', 1);
