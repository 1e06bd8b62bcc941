// Group commit: requests that must be serialised per key (issues of one numbering sequence, credit
// reservations on one invoice) wait in an in-process queue; whoever finds the key idle leads, and
// takes *every* request waiting at that moment as one batch, written with one compare-and-set of the
// shared record instead of one each. Requests arriving meanwhile form the next batch. So the cost of
// the serialised part grows with the number of batches, not of requests: throughput rises with load
// instead of collapsing.
//
// Load shedding and deadlines:
// - a request whose caller's deadline has passed is dropped before it enters the queue and again when
//   its batch is formed (DEADLINE_EXCEEDED): it never costs a store round trip;
// - a key with `maxWaiting` requests waiting refuses more at once with UNAVAILABLE + Retry-After (the
//   gateway's 503), and so does a key whose queue would not reach the request before its deadline
//   (estimated from the time batches took recently): the caller hears "retry" at once instead of a
//   timeout, and the queue never holds work nobody waits for, so it drains within a batch or two of
//   an overload.
import { fail } from '../../shared/errors';
import { deadlineExceeded, deadlinePassed } from '../../shared/deadline';

export interface GroupCommitOptions {
  /** Most requests one batch takes (the rest wait for the next). */
  maxBatch: number;
  /** Most requests waiting per key; more are refused at once (503, retryable). */
  maxWaiting: number;
  /** Code of the overload refusal (e.g. `issuing_overloaded`). */
  overloadCode: string;
  /** Awaited by the leader before it takes a batch (tests hold it to let a batch fill up; no sleeps). */
  beforeBatch?: (key: string, waiting: number) => Promise<void>;
  /** Called when a request joined the queue, with how many wait now (tests release a held batch on it). */
  queued?: (key: string, waiting: number) => void;
}

interface Waiter<T, R> {
  item: T;
  deadline?: number;
  resolve(result: R | Promise<R>): void;
  reject(err: unknown): void;
}

interface Lane<T, R> {
  waiting: Array<Waiter<T, R>>;
  leading: boolean;
  /** Requests in the batch running now (0 when none). */
  running: number;
  /** Smoothed milliseconds one request costs inside a batch (batch time ÷ its size). */
  perItemMs: number;
}

/**
 * What a batch answers for each of its items, in order: a result, or an error for that item alone. A
 * result may be a promise (work that follows the batch without holding the queue, e.g. applying
 * credits): the item's caller waits for it, the next batch does not.
 */
export type BatchOutcome<R> = Array<{ ok: R | Promise<R> } | { error: unknown }>;

/** The largest batch before the pace of batches is known (the first one of a key in a process). */
const FIRST_BATCH_MAX = 10;

export class GroupCommit<T, R> {
  private readonly lanes = new Map<string, Lane<T, R>>();

  constructor(
    private readonly run: (key: string, items: T[]) => Promise<BatchOutcome<R>>,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Requests waiting (not yet in a running batch) for `key`. */
  waiting(key: string): number {
    return this.lanes.get(key)?.waiting.length ?? 0;
  }

  submit(key: string, item: T, deadline?: number): Promise<R> {
    if (deadlinePassed(deadline)) return Promise.reject(deadlineExceeded());
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = { waiting: [], leading: false, running: 0, perItemMs: 0 }));
    if (lane.waiting.length >= this.options.maxWaiting) return Promise.reject(this.overloaded());
    // Would this request still be waiting when its caller gives up? Then say "retry" now, not later.
    const expectedWaitMs = (lane.waiting.length + lane.running) * lane.perItemMs;
    if (deadline !== undefined && lane.perItemMs > 0 && Date.now() + expectedWaitMs >= deadline) return Promise.reject(this.overloaded());
    const promise = new Promise<R>((resolve, reject) => lane!.waiting.push({ item, deadline, resolve, reject }));
    this.options.queued?.(key, lane.waiting.length);
    if (!lane.leading) void this.lead(key, lane);
    return promise;
  }

  private overloaded() {
    return fail.unavailable(this.options.overloadCode, 'too many requests are waiting for the same numbering sequence or invoice; retry after Retry-After', 1);
  }

  private async lead(key: string, lane: Lane<T, R>): Promise<void> {
    lane.leading = true;
    try {
      while (lane.waiting.length) {
        await this.options.beforeBatch?.(key, lane.waiting.length);
        const now = Date.now();
        // A batch no bigger than what can finish before its earliest caller's deadline, at the pace
        // batches went recently: a batch that outlives its callers answers nobody (the rest wait for
        // the next batch, or are refused at once by submit's estimate).
        const batch: Array<Waiter<T, R>> = [];
        let earliest = Infinity;
        while (lane.waiting.length && batch.length < this.options.maxBatch) {
          const waiter = lane.waiting[0];
          if (deadlinePassed(waiter.deadline, now)) {
            lane.waiting.shift();
            waiter.reject(deadlineExceeded());
            continue;
          }
          const end = Math.min(earliest, waiter.deadline ?? Infinity);
          if (batch.length > 0 && lane.perItemMs > 0 && now + (batch.length + 1) * lane.perItemMs > end) break;
          // Until one batch was timed, the pace is unknown: start small rather than with everything waiting.
          if (lane.perItemMs === 0 && batch.length >= FIRST_BATCH_MAX) break;
          earliest = end;
          batch.push(lane.waiting.shift()!);
        }
        if (!batch.length) continue;
        const started = Date.now();
        lane.running = batch.length;
        try {
          const outcome = await this.run(key, batch.map((w) => w.item));
          batch.forEach((waiter, i) => {
            const one = outcome[i];
            if (one && 'ok' in one) waiter.resolve(one.ok);
            else waiter.reject(one ? one.error : new Error('the batch gave no answer for this request'));
          });
        } catch (err) {
          for (const waiter of batch) waiter.reject(err);
        }
        lane.running = 0;
        const perItem = (Date.now() - started) / batch.length;
        lane.perItemMs = lane.perItemMs === 0 ? perItem : 0.7 * lane.perItemMs + 0.3 * perItem;
      }
    } finally {
      lane.leading = false;
      if (!lane.waiting.length) this.lanes.delete(key);
      else void this.lead(key, lane);
    }
  }
}
