// How many rows of each kind a seeding run writes, and into which workspace. Real tenants are skewed:
// one large workspace (the one the volume figures are measured on) holds `largestShare` of each kind,
// the rest is spread evenly over the others. Pure.

export interface SeedCounts {
  workspaces: number;
  contacts: number;
  invoices: number;
  expenses: number;
}

export interface SeedPlan extends SeedCounts {
  /** Share of each kind's rows in the first (largest) workspace, 0–1. */
  largestShare: number;
  /** The run's seed: the same plan and seed write the same data. */
  seed: number;
  /** Documents per bulk write. */
  batch: number;
}

export class PlanError extends Error {}

/** Rows per workspace: the first gets `share` of `total`, at least `minimum` each; the others share the rest evenly. */
export function spread(total: number, workspaces: number, share: number, minimum = 0): number[] {
  const others = workspaces - 1;
  if (others === 0) return [total];
  const largest = Math.max(minimum, Math.min(Math.round(total * share), total - minimum * others));
  const rest = total - largest;
  const base = Math.floor(rest / others);
  const extra = rest % others;
  return [largest, ...Array.from({ length: others }, (_, i) => base + (i < extra ? 1 : 0))];
}

export function checkPlan(plan: SeedPlan): void {
  const counts: Array<[string, number]> = [['workspaces', plan.workspaces], ['contacts', plan.contacts], ['invoices', plan.invoices], ['expenses', plan.expenses], ['batch', plan.batch]];
  for (const [name, value] of counts) {
    if (!Number.isSafeInteger(value) || value < 0) throw new PlanError(`--${name} must be a whole number ≥ 0`);
  }
  if (plan.workspaces < 1) throw new PlanError('--workspaces must be at least 1');
  if (plan.batch < 1) throw new PlanError('--batch must be at least 1');
  if (!(plan.largestShare >= 0 && plan.largestShare <= 1)) throw new PlanError('--largest-share must be between 0 and 1');
  // Invoices need a purchaser and expenses a supplier among the workspace's contacts.
  if ((plan.invoices > 0 || plan.expenses > 0) && plan.contacts < plan.workspaces) {
    throw new PlanError('every workspace needs a contact for its invoices and expenses: --contacts must be at least --workspaces');
  }
}

/** Per workspace (index 0 the largest): how many contacts, invoices and expenses it gets. */
export function perWorkspace(plan: SeedPlan): { contacts: number[]; invoices: number[]; expenses: number[] } {
  const needsContact = plan.invoices > 0 || plan.expenses > 0 ? 1 : 0;
  return {
    contacts: spread(plan.contacts, plan.workspaces, plan.largestShare, needsContact),
    invoices: spread(plan.invoices, plan.workspaces, plan.largestShare),
    expenses: spread(plan.expenses, plan.workspaces, plan.largestShare),
  };
}
