// The seeding command's plan (deploy/seed/plan.ts) and its made-up data (deploy/seed/fake.ts, records.ts).
import Decimal from 'decimal.js';
import { amount, random } from '../../deploy/seed/fake';
import { checkPlan, perWorkspace, PlanError, SeedPlan, spread } from '../../deploy/seed/plan';
import { historyDate, invoice, legalEntity, workspace } from '../../deploy/seed/records';
import { duration } from '../../deploy/seed/progress';
import { embeddedNodeFlags } from '../../deploy/embedded/node-flags';

const plan = (over: Partial<SeedPlan> = {}): SeedPlan => ({ workspaces: 4, contacts: 100, invoices: 40, expenses: 10, largestShare: 0.5, seed: 1, batch: 1000, ...over });

describe('the distribution of rows over workspaces', () => {
  it('gives the first workspace its share and spreads the rest evenly, every row placed', () => {
    expect(spread(100, 4, 0.5)).toEqual([50, 17, 17, 16]);
    expect(spread(1_100_000, 1000, 0.91).reduce((a, b) => a + b)).toBe(1_100_000);
    expect(spread(1_100_000, 1000, 0.91)[0]).toBe(1_001_000);
    expect(spread(7, 1, 0.2)).toEqual([7]);
  });

  it('keeps a minimum per workspace even at share 1 (every workspace needs a contact for its documents)', () => {
    expect(spread(10, 4, 1, 1)).toEqual([7, 1, 1, 1]);
    expect(perWorkspace(plan({ largestShare: 1 })).contacts).toEqual([97, 1, 1, 1]);
    expect(perWorkspace(plan({ largestShare: 1, invoices: 0, expenses: 0 })).contacts).toEqual([100, 0, 0, 0]);
  });

  it('refuses a plan it cannot lay out', () => {
    expect(() => checkPlan(plan({ contacts: 3 }))).toThrow(PlanError);
    expect(() => checkPlan(plan({ contacts: 3, invoices: 0, expenses: 0 }))).not.toThrow();
    expect(() => checkPlan(plan({ workspaces: 0 }))).toThrow(/at least 1/);
    expect(() => checkPlan(plan({ largestShare: 1.5 }))).toThrow(/between 0 and 1/);
    expect(() => checkPlan(plan({ batch: 0 }))).toThrow(/batch/);
  });
});

describe('the made-up data', () => {
  it('is the same for the same seed and ordinal (records are rebuilt, not remembered)', () => {
    const at = '2026-01-01T00:00:00.000Z';
    expect(legalEntity(7, 42, 1042, 3, at)).toEqual(legalEntity(7, 42, 1042, 3, at));
    expect(legalEntity(7, 42, 1042, 3, at).name).not.toEqual(legalEntity(7, 43, 1043, 3, at).name);
  });

  it('draws amounts as decimal strings of the scale asked for', () => {
    const rnd = random(5);
    for (let i = 0; i < 200; i++) {
      const text = amount(rnd, 1, 99);
      expect(text).toMatch(/^\d+\.\d{2}$/);
      expect(new Decimal(text).gte(1) && new Decimal(text).lte(99)).toBe(true);
    }
  });

  it('prices invoices with the domain money code: totals are the sums of lines and VAT, exactly', () => {
    const ws = workspace(1, 0, { account: 1, user: 1, membership: 1 }, 'x', '2026-01-01T00:00:00.000Z');
    const purchaser = { id: 9, name: 'P', registration_id: '', tax_id: '', vat_id: '', email: '', phone: '', address: null, postal_address: null };
    for (let id = 1; id <= 100; id++) {
      const doc = invoice(1, ws, { id, index: id - 1, count: 100, purchaser, today: '2026-06-30' });
      const net = doc.line_items.reduce((sum, l) => sum.plus(l.net_amount), new Decimal(0));
      expect(net.equals(doc.totals.subtotal)).toBe(true);
      expect(new Decimal(doc.totals.subtotal).plus(doc.totals.vat_total).equals(doc.totals.total)).toBe(true);
      expect(['draft', 'exposed', 'paid']).toContain(doc.status);
      if (doc.status === 'paid') expect(doc.paid_on! >= doc.issue_date && doc.paid_on! <= '2026-06-30').toBe(true);
    }
  });

  it('spreads dates over the history, oldest first, ending before today', () => {
    const dates = Array.from({ length: 10 }, (_, i) => historyDate('2026-06-30', i, 10));
    expect(dates).toEqual([...dates].sort());
    expect(dates[9] < '2026-06-30').toBe(true);
    expect(dates[0] >= '2023-07-01').toBe(true);
    expect(duration(3725)).toBe('1h 02m');
  });
});

describe('the embedded process heap bounds (deploy/embedded/node-flags.ts)', () => {
  it('bound the old generation at 160 MB by default, EMBEDDED_HEAP_MB otherwise, and refuse nonsense', () => {
    expect(embeddedNodeFlags({})).toEqual(['--max-old-space-size=160', '--max-semi-space-size=4']);
    expect(embeddedNodeFlags({ EMBEDDED_HEAP_MB: '512' })[0]).toBe('--max-old-space-size=512');
    expect(() => embeddedNodeFlags({ EMBEDDED_HEAP_MB: '12' })).toThrow(/at least 64/);
    expect(() => embeddedNodeFlags({ EMBEDDED_HEAP_MB: 'lots' })).toThrow(/EMBEDDED_HEAP_MB/);
  });
});
