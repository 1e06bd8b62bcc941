// Which workspaces have work waiting: one lane record per (workspace, mode), so a dispatcher can take
// work per workspace in turn without reading any one workspace's backlog first (mail dispatch,
// docs/rendering.md "Dispatch order"; extraction jobs, docs/expenses.md "Fair sharing"). Every accepted
// piece of work writes its lane (active, and a new version); a dispatcher that finds a lane with nothing
// waiting retires it by compare-and-set on the version it read *before* looking — work accepted
// meanwhile changed that version, so its lane stays active. Lanes are never deleted (one small record
// per workspace that ever queued work). A service may keep more fields on its lanes (extraction keeps
// its per-workspace slots there); every write of them goes through the same compare-and-set.
import { Collection, CollectionSpec, mutate, StoredDoc, UniqueViolation, VersionConflict } from './store/port';
import { Tenant, tenantKey } from './tenant';

export interface WorkLane extends StoredDoc {
  key: string;
  account_id: number;
  livemode: boolean;
  active: boolean;
  /** Pieces of work accepted into this lane (every accept writes the lane, so it changes the version). */
  accepted: number;
}

export function workLanesSpec<L extends WorkLane>(name: string): CollectionSpec<L> {
  return { name, uniqueKeys: (l) => [`lane:${l.key}`], indexes: [['key'], ['active']] };
}

export class WorkLanes<L extends WorkLane = WorkLane> {
  constructor(
    readonly lanes: Collection<L>,
    private readonly nextId: () => Promise<number>,
    /** Fields of a new lane beyond the common ones. */
    private readonly fresh: () => Omit<L, keyof WorkLane> = () => ({}) as Omit<L, keyof WorkLane>,
  ) {}

  /** Marks the tenant's lane active; call after the work is stored (so a retiring dispatcher sees it or loses its CAS). */
  async touch(tenant: Tenant): Promise<void> {
    const key = tenantKey(tenant);
    const found = await this.lanes.findOne({ key });
    if (!found) {
      try {
        await this.lanes.insert({ ...this.fresh(), id: await this.nextId(), key, account_id: tenant.account_id, livemode: tenant.livemode, active: true, accepted: 1 } as Omit<L, 'version'>);
        return;
      } catch (err) {
        if (!(err instanceof UniqueViolation)) throw err;
      }
    }
    const lane = found ?? (await this.lanes.findOne({ key }));
    if (!lane) throw new Error(`lane ${key} vanished`);
    await mutate(this.lanes, lane.id, (current) => ({ ...current, active: true, accepted: current.accepted + 1 }));
  }

  /** Active lanes, at most `limit` (newest first). */
  active(limit: number): Promise<L[]> {
    return this.lanes.list({ where: { active: true }, limit });
  }

  /** Retires a lane found empty, unless it was written since `seen` was read. */
  async retire(seen: L): Promise<boolean> {
    try {
      await this.lanes.update({ ...seen, active: false });
      return true;
    } catch (err) {
      if (err instanceof VersionConflict) return false;
      throw err;
    }
  }
}
