// Fair sharing of extraction (services/expenses/domain/extraction-queue.ts, adapters/extraction-worker.ts;
// docs/expenses.md "Fair sharing"): jobs are taken per workspace in turn, under a per-workspace cap that
// holds across replicas (two queues on one store stand for two replicas). Real SQLite store and blobs, a
// fake extractor held by latches: the order is observed, never timed.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expensesStore } from '../../services/expenses/adapters/expenses-store';
import { ExtractionWorker } from '../../services/expenses/adapters/extraction-worker';
import { fileInspector } from '../../services/expenses/adapters/file-inspector';
import { ExpenseFiles } from '../../services/expenses/domain/expense-files';
import { ExtractionQueue, extractionLanes, extractionLanesSpec } from '../../services/expenses/domain/extraction-queue';
import { ExtractionQuota, quotaCountersSpec } from '../../services/expenses/domain/extraction-quota';
import { ExtractionRunner } from '../../services/expenses/domain/extraction-runner';
import { ExtractionInput, ExtractionResult, Extractor } from '../../services/expenses/ports/extractor';
import { FsBlobStore } from '../../services/shared/blobs/fs';
import { MemoryEventBus } from '../../services/shared/bus/memory';
import { createLogger } from '../../services/shared/logger';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { Tenant } from '../../services/shared/tenant';
import { pdfFile } from '../support/expense-files';

const A: Tenant = { account_id: 1, livemode: true };
const B: Tenant = { account_id: 2, livemode: true };
const C: Tenant = { account_id: 3, livemode: true };

/** An extractor whose every call waits until the test finishes it; calls are recorded in order. */
class HeldExtractor implements Extractor {
  readonly calls: Array<{ account: number; finish: () => void }> = [];
  private arrived: Array<() => void> = [];
  constructor(private readonly accountOf: (input: ExtractionInput) => number) {}
  extract(input: ExtractionInput): Promise<ExtractionResult> {
    return new Promise((resolve) => {
      this.calls.push({ account: this.accountOf(input), finish: () => resolve({ fields: EMPTY, confidence: {}, method: 'text_layer', pages: 1 }) });
      this.arrived.splice(0).forEach((wake) => wake());
    });
  }
  /** Resolves once `n` calls have started. */
  async started(n: number): Promise<void> {
    while (this.calls.length < n) await new Promise<void>((resolve) => this.arrived.push(resolve));
  }
}

const EMPTY = {
  supplier: { name: null, registration_id: null, tax_id: null, vat_id: null, address: { street: null, municipality: null, postal_code: null, country_alpha2: null } },
  document_number: null, issue_date: null, due_date: null, currency: null, subtotal: null, vat_total: null, total: null,
  vat_breakdown: [], iban: null, bic: null, variable_symbol: null, line_items: [],
} as unknown as ExtractionResult['fields'];

async function* chunks(file: Buffer) {
  yield file;
}

function setup(options: { perWorkspace: number }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fair-'));
  const db = new SqliteDocumentStore(path.join(dir, 'store.db'));
  const store = expensesStore(db);
  const blobs = new FsBlobStore(path.join(dir, 'blobs'), 'secret-for-tests');
  const clock = { t: Date.parse('2026-11-23T10:00:00Z'), now: () => new Date(clock.t) };
  const leaseMs = 60_000;
  const queue = () => new ExtractionQueue(store, extractionLanes(db.collection(extractionLanesSpec), () => db.nextId('lanes')), clock, { perWorkspace: options.perWorkspace, leaseMs });
  const replica1 = queue();
  const quota = new ExtractionQuota(db.collection(quotaCountersSpec), () => db.nextId('quota'));
  const files = new ExpenseFiles(store, blobs, fileInspector, quota, clock, { retryCooldownMs: 0, onQueued: (e) => replica1.queued(e) });
  const pdf = pdfFile();
  // The blob key names the account (expenses/<account>/…): the extractor is told which workspace it reads for.
  const accounts = new Map<number, number>();
  const extractor = new HeldExtractor((input) => accounts.get(input.bytes.length) ?? -1);
  const upload = async (tenant: Tenant) => {
    // Each workspace's file differs in size by a byte of trailing whitespace, so the extractor can tell them apart.
    const file = Buffer.concat([await pdf, Buffer.from(' '.repeat(tenant.account_id))]);
    accounts.set(file.length, tenant.account_id);
    return files.upload({ tenant, filename: 'x.pdf', declaredType: 'application/pdf', allowance: 1000 }, chunks(file));
  };
  const runner = new ExtractionRunner(store, blobs, extractor, { match: async () => null }, clock, { timeLimitMs: 30_000, leaseMs });
  const worker = (q: ExtractionQueue, concurrency: number) => new ExtractionWorker(runner, q, new MemoryEventBus(), createLogger('fairness-test'), { concurrency, pollMs: 3_600_000 });
  return { store, clock, queue, replica1, upload, extractor, runner, worker };
}

describe('fair order: jobs are taken per workspace in turn', () => {
  it('a workspace with a backlog of 6 delays another workspace’s first job by at most the one job already running', async () => {
    const s = setup({ perWorkspace: 2 });
    for (let i = 0; i < 6; i++) await s.upload(A);
    const worker = s.worker(s.replica1, 1);
    await worker.start();
    await s.extractor.started(1); // A's first job runs; B uploads behind A's backlog of 5
    await s.upload(B);
    await s.upload(C);
    for (let n = 1; n <= 4; n++) {
      s.extractor.calls[n - 1].finish();
      await s.extractor.started(n + 1);
    }
    expect(s.extractor.calls.map((c) => c.account)).toEqual([1, 2, 3, 1, 1]);
    s.extractor.calls.forEach((c) => c.finish());
    await worker.stop();
  });
});

describe('per-workspace cap (EXTRACTION_WORKSPACE_CONCURRENCY), across replicas', () => {
  it('cap 1: two replicas with free slots run one job of the backlogged workspace and the other workspace’s job, never two of one', async () => {
    const s = setup({ perWorkspace: 1 });
    for (let i = 0; i < 4; i++) await s.upload(A);
    const first = await s.replica1.next();
    const replica2 = s.queue();
    expect(await replica2.next()).toBeNull(); // A is at its cap, nobody else has work
    await s.upload(B);
    const second = await replica2.next();
    const jobs = [first!, second!];
    const accounts = await Promise.all(jobs.map(async (j) => (await s.store.expenses.get(j.expenseId))!.account_id));
    expect(accounts).toEqual([1, 2]);
    expect(await s.replica1.next()).toBeNull();
    await s.replica1.release(first!);
    expect(await replica2.next()).toMatchObject({ laneId: first!.laneId });
  });

  it('cap 2 with one process running 3 at once: at most 2 of the backlogged workspace run; the third slot serves the other', async () => {
    const s = setup({ perWorkspace: 2 });
    for (let i = 0; i < 5; i++) await s.upload(A);
    await s.upload(B);
    const worker = s.worker(s.replica1, 3);
    await worker.start();
    await s.extractor.started(3);
    expect(s.extractor.calls.map((c) => c.account).sort()).toEqual([1, 1, 2]);
    s.extractor.calls.forEach((c) => c.finish());
    await s.extractor.started(5);
    s.extractor.calls.forEach((c) => c.finish());
    await worker.stop();
  });

  it('a slot whose worker died frees when its lease ends', async () => {
    const s = setup({ perWorkspace: 1 });
    await s.upload(A);
    await s.upload(A);
    expect(await s.replica1.next()).not.toBeNull(); // this worker dies: never runs nor releases it
    expect(await s.replica1.next()).toBeNull();
    s.clock.t += 60_000;
    expect(await s.replica1.next()).not.toBeNull();
  });
});

describe('repair: work a dead process left behind is found', () => {
  it('a pending job whose lane was never touched is found by the repair scan', async () => {
    const s = setup({ perWorkspace: 2 });
    const expense = await s.upload(A);
    // As if the process died between writing the job and touching its lane: the lane is inactive.
    const lanes = await s.replica1.lanes.active(10);
    await s.replica1.lanes.retire(lanes[0]);
    expect(await s.replica1.next()).toBeNull();
    expect(await s.replica1.repair()).toBe(1);
    expect(await s.replica1.next()).toMatchObject({ expenseId: expense.id });
  });
});

describe('deleted expenses never hold up their workspace', () => {
  it('pending jobs of deleted expenses at the head of the queue are skipped', async () => {
    const s = setup({ perWorkspace: 1 });
    const deleted = [await s.upload(A), await s.upload(A), await s.upload(A)];
    const live = await s.upload(A);
    for (const e of deleted) await s.store.expenses.update({ ...(await s.store.expenses.get(e.id))!, deleted: new Date().toISOString() });
    expect(await s.replica1.next()).toMatchObject({ expenseId: live.id });
  });
});
