// Fair sharing of a bounded pool of workers between tenants: one lane per tenant (any string key), the
// lanes taken in turn. Pure bookkeeping, synchronous, no timers and no I/O: the owner of the workers
// (the Chromium pool today; any in-process work queue tomorrow) asks `offer` whether a new item may
// start, tells `done` when one ends, and asks `next` which waiting item to start whenever a worker is
// free. Rules (docs/rendering.md, "Fair sharing of the renderer"):
//  - Turn order: among the lanes with an item that may start, the lane served least recently goes first
//    (a lane never served, or served long ago, before one that was just served). So a lane with a
//    backlog of 100 and a newcomer alternate, and the newcomer's first item is the next one started.
//  - Per-lane cap: at most `laneConcurrency` items of one lane run at once; more wait even when
//    workers are free (a tenant's slow items never hold every worker).
//  - Bounds: at most `laneQueueMax` items wait per lane and `queueMax` in all; beyond either the offer
//    is refused at once (the caller answers a retryable refusal), never queued past its deadline.
//  - Background items (the `background` predicate, read when the next item is chosen, so an item can be
//    made urgent while it waits) start only when no urgent item of any lane may start.
// A lane's record is dropped once nothing of it runs or waits: a tenant using nothing is owed nothing.

export interface FairLanesLimits {
  /** Items of one lane running at once; further items of that lane wait even when workers are free. */
  laneConcurrency: number;
  /** Items of one lane waiting; an offer beyond it is refused with `lane_full`. */
  laneQueueMax: number;
  /** Items waiting in all lanes together; an offer beyond it is refused with `full`. */
  queueMax: number;
}

/** `start`: run it now (counted as running); `queued`: it waits for `next`; else refused, nothing kept. */
export type FairOffer = 'start' | 'queued' | 'lane_full' | 'full';

interface Lane<T> {
  running: number;
  waiting: T[];
  /** The turn number of this lane's latest start (0: never). */
  servedAt: number;
}

export class FairLanes<T> {
  private readonly lanes = new Map<string, Lane<T>>();
  private turns = 0;
  private waitingTotal = 0;

  constructor(
    private readonly limits: FairLanesLimits,
    private readonly background: (item: T) => boolean = () => false,
  ) {}

  /**
   * A new item of `lane`. `workerFree`: the owner has a worker for it now. It starts at once when a
   * worker is free and its lane is under its cap (a waiting item is only ever blocked by its own lane's
   * cap while workers are free, so starting this one jumps no one it should not).
   */
  offer(lane: string, item: T, workerFree: boolean): FairOffer {
    const record = this.lane(lane);
    if (workerFree && record.running < this.limits.laneConcurrency) {
      this.start(record);
      return 'start';
    }
    if (record.waiting.length >= this.limits.laneQueueMax) return this.refuse(lane, 'lane_full');
    if (this.waitingTotal >= this.limits.queueMax) return this.refuse(lane, 'full');
    record.waiting.push(item);
    this.waitingTotal++;
    return 'queued';
  }

  /** The next waiting item to start on a free worker (now counted as running), or none that may start. */
  next(): { lane: string; item: T } | undefined {
    for (const urgent of [true, false]) {
      let best: { key: string; record: Lane<T>; at: number } | undefined;
      for (const [key, record] of this.lanes) {
        if (record.running >= this.limits.laneConcurrency || (best && best.record.servedAt <= record.servedAt)) continue;
        const at = record.waiting.findIndex((item) => this.background(item) !== urgent);
        if (at >= 0) best = { key, record, at };
      }
      if (best) {
        const [item] = best.record.waiting.splice(best.at, 1);
        this.waitingTotal--;
        this.start(best.record);
        return { lane: best.key, item };
      }
    }
    return undefined;
  }

  /** An item of `lane` that was started has ended (however it ended). */
  done(lane: string): void {
    const record = this.lanes.get(lane);
    if (!record || record.running === 0) throw new Error(`fair lanes: nothing of lane ${lane} is running`);
    record.running--;
    this.forgetIfIdle(lane, record);
  }

  /** Withdraws a waiting item (its wait ended); false when it is not waiting (already started). */
  withdraw(lane: string, item: T): boolean {
    const record = this.lanes.get(lane);
    const at = record ? record.waiting.indexOf(item) : -1;
    if (!record || at < 0) return false;
    record.waiting.splice(at, 1);
    this.waitingTotal--;
    this.forgetIfIdle(lane, record);
    return true;
  }

  /** Every waiting item, removed (the owner is closing). */
  drain(): T[] {
    const items = [...this.lanes.values()].flatMap((record) => record.waiting.splice(0));
    this.waitingTotal = 0;
    for (const [key, record] of this.lanes) this.forgetIfIdle(key, record);
    return items;
  }

  /** Items waiting, in all lanes or in one. */
  waiting(lane?: string): number {
    return lane === undefined ? this.waitingTotal : (this.lanes.get(lane)?.waiting.length ?? 0);
  }

  /** Items running, in all lanes or in one. */
  running(lane?: string): number {
    if (lane !== undefined) return this.lanes.get(lane)?.running ?? 0;
    let total = 0;
    for (const record of this.lanes.values()) total += record.running;
    return total;
  }

  private lane(key: string): Lane<T> {
    let record = this.lanes.get(key);
    if (!record) this.lanes.set(key, (record = { running: 0, waiting: [], servedAt: 0 }));
    return record;
  }

  private start(record: Lane<T>): void {
    record.running++;
    record.servedAt = ++this.turns;
  }

  private refuse(key: string, why: 'lane_full' | 'full'): FairOffer {
    this.forgetIfIdle(key, this.lanes.get(key)!);
    return why;
  }

  private forgetIfIdle(key: string, record: Lane<T>): void {
    if (record.running === 0 && record.waiting.length === 0) this.lanes.delete(key);
  }
}
