// The seeding command (npm run seed, deploy/seed/): what it writes through the store ports in bulk is
// data the API serves as its own — lists, reads, `q` and `search`, numbering that continues after the
// seeded numbers — in both modes; and a target that already holds workspaces is refused.
import { execFile } from 'node:child_process';
import Decimal from 'decimal.js';
import { foldText } from '../../services/expenses/domain/listing';
import { Api } from '../support/api';
import { tokenFor } from '../support/fixtures';
import { withoutEngines } from '../support/real-engines';
import { currentMode, dist, startSystem, System } from '../support/system';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const PLAN = ['--workspaces', '2', '--contacts', '300', '--invoices', '200', '--expenses', '100', '--largest-share', '0.5', '--batch', '64'];

function runSeed(target: { DATA_DIR: string; MONGO_URL?: string }, args: string[]): Promise<Run> {
  const mode = target.MONGO_URL ? 'distributed' : 'embedded';
  const env = { ...withoutEngines(), ...(target.MONGO_URL ? { MONGO_URL: target.MONGO_URL } : {}) };
  return new Promise((resolve) => {
    execFile(process.execPath, [dist('deploy/seed/main.js'), '--mode', mode, '--data-dir', target.DATA_DIR, ...args], { env }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let system: System;
let seeded: Run;
let target: { DATA_DIR: string; MONGO_URL?: string };
let largest: Api;
let other: Api;
let summary: { rows: Record<string, number>; largest_workspace_id: number; workspace_ids: { first: number; last: number } };

beforeAll(async () => {
  system = await startSystem({
    beforeStart: async (where) => {
      target = where;
      seeded = await runSeed(where, PLAN);
    },
  });
  expect(seeded.stderr).not.toMatch(/Error/);
  expect(seeded.code).toBe(0);
  summary = JSON.parse(seeded.stdout);
  largest = new Api(system.baseUrl, await tokenFor(system, 'live', summary.largest_workspace_id, 'all'));
  other = new Api(system.baseUrl, await tokenFor(system, 'live', summary.workspace_ids.last, 'all'));
});
afterAll(() => system?.stop());

/** Every row of a list, page by page (100 a page) along next_cursor. */
async function everything(api: Api, path: string): Promise<any[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const rows = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await api.get(`${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    rows.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor);
  return rows;
}

const ws = () => `/api/v1/accounts/${summary.largest_workspace_id}`;

describe(`npm run seed (${currentMode()} mode)`, () => {
  it('reports what it wrote on stdout and its progress on stderr (rows/s, ETA)', () => {
    expect(summary.rows).toEqual({ workspaces: 2, contacts: 300, invoices: 200, expenses: 100 });
    expect(summary.workspace_ids.last).toBe(summary.workspace_ids.first + 1);
    for (const phase of ['workspaces', 'contacts', 'invoices', 'expenses']) expect(seeded.stderr).toMatch(new RegExp(`^seed: ${phase} .* rows/s .* ETA `, 'm'));
    expect(seeded.stderr).toMatch(/^seed: done: 602 rows in /m);
  });

  it('refuses a target that already holds workspaces, writing nothing', async () => {
    const again = await runSeed(target, PLAN);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('the target already holds workspaces');
    expect((await everything(largest, `${ws()}/contacts`)).length).toBe(150);
  });

  it('refuses a plan it cannot lay out (usage error, exit 2)', async () => {
    const run = await runSeed(target, ['--workspaces', '10', '--contacts', '5', '--invoices', '1']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--contacts must be at least --workspaces');
  });
});

describe('seeded contacts through GET /accounts/<account_id>/contacts', () => {
  it('lists every contact of the workspace (its share of the plan), id descending, each readable by id', async () => {
    const contacts = await everything(largest, `${ws()}/contacts`);
    expect(contacts).toHaveLength(150);
    expect(contacts.map((c) => c.id)).toEqual([...contacts.map((c) => c.id)].sort((a, b) => b - a));
    const one = await largest.get(`${ws()}/contacts/${contacts[7].id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(contacts[7]);
    expect(one.body.invoice_account).toMatchObject({ name: expect.any(String), address: { municipality: expect.any(String) } });
    // The other workspace sees its own share only.
    expect((await everything(other, `/api/v1/accounts/${summary.workspace_ids.last}/contacts`)).length).toBe(150);
  });

  it('`q` finds exactly the contacts whose name or entity name holds the text', async () => {
    const contacts = await everything(largest, `${ws()}/contacts`);
    const needle = contacts[3].invoice_account.name.split(' ')[0].slice(1, 5).toLowerCase();
    const expected = contacts.filter((c) => `${c.name}\n${c.invoice_account.name}`.toLowerCase().includes(needle)).map((c) => c.id);
    const found = await everything(largest, `${ws()}/contacts?q=${encodeURIComponent(needle.toUpperCase())}`);
    expect(found.map((c) => c.id)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(0);
  });
});

describe('seeded invoices through GET /accounts/<account_id>/invoices', () => {
  it('hold drafts, issued and paid invoices with exact totals; issued numbers gapless per year', async () => {
    const invoices = await everything(largest, `${ws()}/invoices`);
    expect(invoices).toHaveLength(100);
    expect(new Set(invoices.map((i) => i.status))).toEqual(new Set(['draft', 'exposed', 'paid']));
    expect(new Set(invoices.map((i) => i.currency)).size).toBeGreaterThan(1);
    for (const inv of invoices) {
      const net = inv.line_items.reduce((sum: Decimal, l: { net_amount: string }) => sum.plus(l.net_amount), new Decimal(0));
      expect(net.equals(inv.subtotal)).toBe(true);
      expect(new Decimal(inv.subtotal).plus(inv.vat_total).equals(inv.total)).toBe(true);
      expect(inv.purchaser_id).toBeGreaterThan(0);
    }
    const byYear = new Map<string, number[]>();
    for (const inv of invoices.filter((i) => i.status !== 'draft')) {
      const year = inv.number.slice(0, 4);
      byYear.set(year, [...(byYear.get(year) ?? []), Number(inv.number.slice(4))]);
    }
    for (const counters of byYear.values()) expect(counters.sort((a, b) => a - b)).toEqual(counters.map((_, i) => i + 1));
  });

  it('a seeded draft issues with the next number of its year: the sequences continue after the seeded numbers', async () => {
    const invoices = await everything(largest, `${ws()}/invoices`);
    const draft = invoices.find((i) => i.status === 'draft');
    const issued = await largest.post(`${ws()}/invoices/${draft.id}/issue`, {});
    expect(issued.status).toBe(200);
    const year = issued.body.number.slice(0, 4);
    const seededInYear = invoices.filter((i) => i.number?.startsWith(year)).length;
    expect(Number(issued.body.number.slice(4))).toBe(seededInYear + 1);
    expect((await largest.get(`${ws()}/invoices/${draft.id}`)).body.status).toBe('exposed');
  });
});

describe('seeded expenses through GET /accounts/<account_id>/expenses', () => {
  it('lists them by issue date, with suppliers among the contacts, searchable by supplier name', async () => {
    const expenses = await everything(largest, `${ws()}/expenses`);
    expect(expenses).toHaveLength(50);
    const dates = expenses.map((e) => e.issue_date);
    expect(dates).toEqual([...dates].sort().reverse());
    const one = (await largest.get(`${ws()}/expenses/${expenses[0].id}`)).body;
    expect(one).toMatchObject({ extraction_status: 'manual', supplier_id: expect.any(Number), total: expect.any(String) });
    expect((await largest.get(`${ws()}/contacts/${one.supplier_id}`)).status).toBe(200);
    const needle = one.supplier.name.toLowerCase().slice(0, 6);
    const found = (await everything(largest, `${ws()}/expenses?search=${encodeURIComponent(needle)}`)).map((e) => e.id);
    // Every expense whose printed fields hold the text is found (the linked contact's label may add more).
    const visible = expenses.filter((e) => [e.document_number, e.variable_symbol, e.supplier?.name, e.note].some((f) => foldText(f ?? '').includes(foldText(needle))));
    expect(visible.map((e) => e.id)).toContain(one.id);
    expect(found).toEqual(expect.arrayContaining(visible.map((e) => e.id)));
    expect(found.every((id) => expenses.some((e) => e.id === id))).toBe(true);
  });
});
