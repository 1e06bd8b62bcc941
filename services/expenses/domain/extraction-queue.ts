// Which extraction job runs next (docs/expenses.md "Fair sharing"): jobs are taken per workspace in
// turn, never in arrival order across workspaces, so one workspace's backlog delays another workspace's
// first job by at most one job's service time. The store is the queue, shared by every replica:
//
// - a **lane** per workspace and mode (services/shared/work-lanes.ts, collection `extraction_lanes`)
//   says which workspaces have pending jobs; every queued job touches it;
// - the lane holds the workspace's **slots** (jobs running now, each until its lease ends) and when a
//   job of it last started (`served_at`). A worker with a free slot reads the active lanes and takes the
//   workspace with the fewest running jobs, then the one served longest ago (least recently served =
//   round robin, kept in the store so it holds across replicas), below its cap;
// - a slot is reserved by compare-and-set on the lane (at most `perWorkspace` live slots: the cap holds
//   across replicas), then the job is claimed by compare-and-set on the expense (extraction-runner.ts).
//   A worker that dies holding a slot frees it when the slot's lease ends, as its job's claim does.
//
// Within a workspace, jobs run oldest first (`job_rank`).
import { mutate } from '../../shared/store/port';
import { Tenant, tenantKey, tenantWhere } from '../../shared/tenant';
import { WorkLane, WorkLanes, workLanesSpec } from '../../shared/work-lanes';
import { ExpenseRecord, ExpensesStore } from '../ports/expenses-store';
import { Clock } from '../ports/suppliers';
import { isDue } from './extraction-job';

export interface ExtractionLane extends WorkLane {
  /** Epoch ms a job of this workspace last started (0: never): the least recently served goes first. */
  served_at: number;
  /** The workspace's jobs running now, each until its lease ends. */
  slots: Array<{ job_id: string; until: number }>;
}

export const extractionLanesSpec = workLanesSpec<ExtractionLane>('extraction_lanes');

export const extractionLanes = (lanes: WorkLanes<ExtractionLane>['lanes'], nextId: () => Promise<number>) =>
  new WorkLanes<ExtractionLane>(lanes, nextId, () => ({ served_at: 0, slots: [] }));

export interface QueueOptions {
  /** Jobs of one workspace running at once, over all replicas (EXTRACTION_WORKSPACE_CONCURRENCY). */
  perWorkspace: number;
  /** How long a slot is held without its worker (the job's lease). */
  leaseMs: number;
}

/** A job taken from the queue, with the slot reserved for it (release it when the attempt ends). */
export interface TakenJob {
  expenseId: number;
  jobId: string;
  laneId: number;
}

/** Lanes (workspaces with pending jobs) looked at per pick; beyond it, later picks. */
const MAX_LANES = 1000;
/** Due jobs the repair scan reads per status. */
const SCAN = 100;

const liveSlots = (lane: ExtractionLane, now: number) => (lane.slots ?? []).filter((s) => s.until > now);

export class ExtractionQueue {
  /** Jobs found processing under a lapsed lease (their worker died): taken before the lanes. */
  private readonly recovered = new Map<string, { expenseId: number; jobId: string; tenant: Tenant }>();

  constructor(
    private readonly store: ExpensesStore,
    readonly lanes: WorkLanes<ExtractionLane>,
    private readonly clock: Clock,
    private readonly options: QueueOptions,
  ) {}

  /** A job of `tenant` was queued (call after it is written, so a retiring worker sees it or loses its CAS). */
  queued(tenant: Tenant): Promise<void> {
    return this.lanes.touch(tenant);
  }

  /**
   * The next job to run, its slot reserved; null when no workspace with pending jobs is below its cap.
   * Fewest running first, then least recently served.
   */
  async next(): Promise<TakenJob | null> {
    const now = this.clock.now().getTime();
    for (const [key, job] of this.recovered) {
      this.recovered.delete(key);
      const taken = await this.reserveFor(job.tenant, job.expenseId, job.jobId, now);
      if (taken) return taken;
    }
    const lanes = await this.lanes.active(MAX_LANES);
    const { perWorkspace } = this.options;
    const heads = await Promise.all(
      lanes.map(async (lane) => {
        // Up to `perWorkspace` pending jobs may be reserved by other workers and not yet claimed: one more is free.
        const pending = await this.store.expenses.list({ where: { ...tenantWhere(lane), extraction_status: 'pending', deleted: null }, orderBy: ['job_rank'], limit: perWorkspace + 1 });
        const due = pending.filter((e) => e.job_id);
        if (due.length === 0) await this.lanes.retire(lane);
        return { lane, due };
      }),
    );
    const candidates = heads
      .filter((h) => h.due.length > 0 && liveSlots(h.lane, now).length < perWorkspace)
      .sort((a, b) => liveSlots(a.lane, now).length - liveSlots(b.lane, now).length || a.lane.served_at - b.lane.served_at || a.lane.id - b.lane.id);
    for (const { lane, due } of candidates) {
      for (const job of due) {
        const taken = await this.reserve(lane.id, job, now);
        if (taken === 'full') break;
        if (taken) return taken;
      }
    }
    return null;
  }

  /** Frees the slot of a job whose attempt ended (whatever its outcome). */
  async release(job: TakenJob): Promise<void> {
    await mutate(this.lanes.lanes, job.laneId, (lane) => {
      const slots = lane.slots ?? [];
      return slots.some((s) => s.job_id === job.jobId) ? { ...lane, slots: slots.filter((s) => s.job_id !== job.jobId) } : null;
    });
  }

  /**
   * The safety net, run at start and every poll: pending jobs whose lane is not active (a process died
   * between writing the job and touching its lane) get it touched; jobs processing under a lapsed lease
   * (their worker died) are taken by the next pick. Returns how many it found.
   */
  async repair(): Promise<number> {
    const now = this.clock.now();
    const [pending, processing] = await Promise.all(
      (['pending', 'processing'] as const).map((status) => this.store.expenses.list({ where: { extraction_status: status }, limit: SCAN })),
    );
    const active = new Set((await this.lanes.active(MAX_LANES)).map((l) => l.key));
    let found = 0;
    for (const e of pending.filter((r) => r.deleted === null && isDue(r, now))) {
      if (active.has(tenantKey(e))) continue;
      active.add(tenantKey(e));
      await this.lanes.touch(e);
      found++;
    }
    for (const e of processing.filter((r) => r.deleted === null && isDue(r, now))) {
      this.recovered.set(`${e.id}:${e.job_id}`, { expenseId: e.id, jobId: e.job_id!, tenant: { account_id: e.account_id, livemode: e.livemode } });
      found++;
    }
    return found;
  }

  private async reserveFor(tenant: Tenant, expenseId: number, jobId: string, now: number): Promise<TakenJob | null> {
    let lane = await this.lanes.lanes.findOne({ key: tenantKey(tenant) });
    if (!lane) {
      await this.lanes.touch(tenant);
      lane = await this.lanes.lanes.findOne({ key: tenantKey(tenant) });
    }
    if (!lane) return null;
    const taken = await this.reserve(lane.id, { id: expenseId, job_id: jobId }, now);
    return taken === 'full' ? null : taken;
  }

  /** A slot for `job` in its lane, by compare-and-set: 'full' at the cap, null when the job already has one (another worker took it). */
  private async reserve(laneId: number, job: Pick<ExpenseRecord, 'id' | 'job_id'>, now: number): Promise<TakenJob | null | 'full'> {
    let result: TakenJob | null | 'full' = null;
    await mutate(this.lanes.lanes, laneId, (lane) => {
      const live = liveSlots(lane, now);
      result = null;
      if (live.some((s) => s.job_id === job.job_id)) return null;
      if (live.length >= this.options.perWorkspace) {
        result = 'full';
        return null;
      }
      result = { expenseId: job.id, jobId: job.job_id!, laneId };
      return { ...lane, served_at: now, slots: [...live, { job_id: job.job_id!, until: now + this.options.leaseMs }] };
    });
    return result;
  }
}
