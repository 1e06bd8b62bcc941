// Which workspaces have queued deliveries: one lane record per (workspace, mode), so dispatch can take
// work per workspace in turn without reading any one workspace's backlog first. Every accepted request
// writes its lane (active, and a new version); a dispatcher that finds a lane with nothing queued
// retires it by compare-and-set on the version it read *before* looking — a request accepted meanwhile
// changed that version, so its lane stays active. Lanes are never deleted (one small record per
// workspace that ever mailed).
import { Collection, CollectionSpec, mutate, UniqueViolation, VersionConflict } from '../../shared/store/port';
import { Tenant, tenantKey } from '../../shared/tenant';
import type { MailLane } from '../ports/mail';

export const mailLanesSpec: CollectionSpec<MailLane> = {
  name: 'mail_lanes',
  uniqueKeys: (l) => [`lane:${l.key}`],
  indexes: [['key'], ['active']],
};

export class MailLanes {
  constructor(
    private readonly lanes: Collection<MailLane>,
    private readonly nextId: () => Promise<number>,
  ) {}

  /** Marks the tenant's lane active; call after the delivery is stored (so a retiring dispatcher sees it or loses its CAS). */
  async touch(tenant: Tenant): Promise<void> {
    const key = tenantKey(tenant);
    const found = await this.lanes.findOne({ key });
    if (!found) {
      try {
        await this.lanes.insert({ id: await this.nextId(), key, account_id: tenant.account_id, livemode: tenant.livemode, active: true, accepted: 1 });
        return;
      } catch (err) {
        if (!(err instanceof UniqueViolation)) throw err;
      }
    }
    const lane = found ?? (await this.lanes.findOne({ key }));
    if (!lane) throw new Error(`mail lane ${key} vanished`);
    await mutate(this.lanes, lane.id, (current) => ({ ...current, active: true, accepted: current.accepted + 1 }));
  }

  /** Active lanes, at most `limit` (newest first). */
  active(limit: number): Promise<MailLane[]> {
    return this.lanes.list({ where: { active: true }, limit });
  }

  /** Retires a lane found empty, unless it was written since `seen` was read. */
  async retire(seen: MailLane): Promise<boolean> {
    try {
      await this.lanes.update({ ...seen, active: false });
      return true;
    } catch (err) {
      if (err instanceof VersionConflict) return false;
      throw err;
    }
  }
}
