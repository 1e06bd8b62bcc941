// The extraction job runner and the upload/retry use cases (services/expenses/domain/extraction-runner.ts,
// expense-files.ts) on a real SQLite store and filesystem blobs, with a fake Extractor: the result is
// written, a failure ends `failed` with its reason within the time limit, a job interrupted by a crash
// (driven by hooks, never sleeps) is taken again after its lease and never left in processing, a retry is
// refused while a job is due, quota and job commit together (crashes between them driven by hooks), and
// the outbox carries one extraction_requested event per job.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileInspector } from '../../services/expenses/adapters/file-inspector';
import { expensesStore } from '../../services/expenses/adapters/expenses-store';
import { EXTRACTION_REQUESTED, ExpenseFiles } from '../../services/expenses/domain/expense-files';
import { MAX_SANDBOX_KILLS } from '../../services/expenses/domain/extraction-job';
import { ExtractionQuota, quotaCountersSpec } from '../../services/expenses/domain/extraction-quota';
import { ExtractionRunner, RunnerHooks, SupplierMatcher } from '../../services/expenses/domain/extraction-runner';
import { ExpensesStore, storedConfidence } from '../../services/expenses/ports/expenses-store';
import { ExtractedFields, ExtractionFailure, ExtractionInput, ExtractionResult, Extractor } from '../../services/expenses/ports/extractor';
import { FsBlobStore } from '../../services/shared/blobs/fs';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { pdfFile } from '../support/expense-files';

const tenant = { account_id: 7, livemode: true };

function fields(total: string): ExtractedFields {
  return {
    supplier: { name: 'Papiernictvo Nova s.r.o.', registration_id: '35757442', tax_id: null, vat_id: 'SK2021853504', address: { street: 'Hlavna 12', municipality: 'Bratislava', postal_code: '81101', country_alpha2: 'sk' } },
    document_number: '2026-0042',
    issue_date: '2026-03-01',
    due_date: '2026-03-15',
    currency: 'EUR',
    subtotal: '100.00',
    vat_total: '20.00',
    total,
    vat_breakdown: [{ rate: '20', base: '100.00', vat: '20.00' }],
    iban: 'SK3112000000198742637541',
    bic: null,
    variable_symbol: '20260042',
    line_items: [{ name: 'Office paper', quantity: '5', unit_price: '20.00', total: '100.00' }],
  };
}

/** A latch a test opens: the step waits on it. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

class FakeExtractor implements Extractor {
  calls: ExtractionInput[] = [];
  constructor(private readonly behave: (input: ExtractionInput) => Promise<ExtractionResult>) {}
  extract(input: ExtractionInput) {
    this.calls.push(input);
    return this.behave(input);
  }
}

const ok = (total = '120.00') => async (): Promise<ExtractionResult> => ({ fields: fields(total), confidence: { total: 0.97, 'supplier.vat_id': 0.99 }, method: 'text_layer', pages: 1 });

interface Setup {
  store: ExpensesStore;
  files: ExpenseFiles;
  quota: ExtractionQuota;
  clock: { t: number; now(): Date };
  runner(extractor: Extractor, hooks?: RunnerHooks, timeLimitMs?: number): ExtractionRunner;
  matched: string[];
}

function setup(): Setup {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'runner-'));
  const db = new SqliteDocumentStore(path.join(dir, 'store.db'));
  const store = expensesStore(db);
  const blobs = new FsBlobStore(path.join(dir, 'blobs'), 'secret-for-tests');
  const clock = { t: Date.parse('2026-11-23T10:00:00Z'), now: () => new Date(clock.t) };
  const quota = new ExtractionQuota(db.collection(quotaCountersSpec), () => db.nextId('quota'));
  const files = new ExpenseFiles(store, blobs, fileInspector, quota, clock, { retryCooldownMs: 60_000 });
  const matched: string[] = [];
  const suppliers: SupplierMatcher = {
    match: async (_t, supplier, jobId) => {
      matched.push(jobId);
      return { id: 501, name: supplier.name ?? '' };
    },
  };
  return {
    store,
    files,
    quota,
    clock,
    matched,
    runner: (extractor, hooks = {}, timeLimitMs = 5_000) => new ExtractionRunner(store, blobs, extractor, suppliers, clock, { timeLimitMs, leaseMs: timeLimitMs + 1_000 }, hooks),
  };
}

async function* chunks(file: Buffer) {
  for (let at = 0; at < file.length; at += 1000) yield file.subarray(at, at + 1000);
}

async function uploadOne(s: Setup, allowance = 10) {
  return s.files.upload({ tenant, filename: 'invoice.pdf', declaredType: 'application/pdf', allowance }, chunks(await pdfFile()));
}

describe('upload', () => {
  it('stores the expense pending with its expense.created event, then one extraction_requested event, in its outbox', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    expect(expense.extraction_status).toBe('pending');
    expect(expense.outbox!.map((e) => e.type)).toEqual(['expenses.expense.created', EXTRACTION_REQUESTED]);
    expect(expense.outbox![0].object).toMatchObject({ id: expense.id, extraction_status: 'pending' });
    expect(expense.outbox![1]).toMatchObject({ type: EXTRACTION_REQUESTED, payload: { extraction_requested: { expense_id: expense.id, job_id: expense.job_id, tier: 'standard' } } });
  });

  it('a refused file leaves no expense', async () => {
    const s = setup();
    await expect(s.files.upload({ tenant, filename: 'x.pdf', declaredType: 'application/pdf', allowance: 10 }, chunks(Buffer.from('%PDF-1.7\nnothing')))).rejects.toMatchObject({ code: 'file_corrupt' });
    expect(await s.store.expenses.count({})).toBe(0);
  });

  it('quota used up: manual, no job, no job event (only the expense.created event)', async () => {
    const s = setup();
    await uploadOne(s, 1);
    const second = await uploadOne(s, 1);
    expect(second).toMatchObject({ extraction_status: 'manual', job_id: null });
    expect((second.outbox ?? []).map((e) => e.type)).toEqual(['expenses.expense.created']);
  });

  it('a job’s outcome is its expense.extraction_completed / extraction_failed event, in the write that settles it', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    expect(await s.runner(new FakeExtractor(async () => Promise.reject(new ExtractionFailure('unreadable', 'noise')))).run(expense.id, expense.job_id!)).toBe('failed');
    const failedOne = (await s.store.expenses.get(expense.id))!;
    const last = failedOne.outbox![failedOne.outbox!.length - 1];
    expect(last.type).toBe('expenses.expense.extraction_failed');
    expect(last.object).toMatchObject({ id: expense.id, extraction_status: 'failed', version: failedOne.version - 1 });
  });
});

describe('running a job', () => {
  it('pending → processing → completed: the fields read, their confidence and the matched supplier are written', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    const extractor = new FakeExtractor(ok());
    const runner = s.runner(extractor);
    expect(await runner.dueJobs()).toEqual([{ expenseId: expense.id, jobId: expense.job_id }]);
    expect(await runner.run(expense.id, expense.job_id!)).toBe('completed');
    expect(extractor.calls[0]).toMatchObject({ contentType: 'application/pdf', tier: 'standard' });
    const done = (await s.store.expenses.get(expense.id))!;
    expect(done).toMatchObject({ extraction_status: 'completed', supplier_id: 501, document_number: '2026-0042', issue_date: '2026-03-01', iban: 'SK3112000000198742637541', confidence: { total: 0.97 } });
    expect(done.confidence).toEqual(storedConfidence({ total: 0.97, 'supplier.vat_id': 0.99 }));
    expect(done.totals).toMatchObject({ subtotal: '100.00', vat_total: '20.00', total: '120.00' });
    expect(done.items).toHaveLength(1);
    // A duplicate event (redelivery) finds nothing to do.
    expect(await runner.run(expense.id, expense.job_id!)).toBe('not_due');
    expect(extractor.calls).toHaveLength(1);
  });

  it('an ExtractionFailure ends failed with its reason', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    const runner = s.runner(new FakeExtractor(async () => Promise.reject(new ExtractionFailure('too_many_pages', 'the PDF has 500 pages; at most 50 are read'))));
    expect(await runner.run(expense.id, expense.job_id!)).toBe('failed');
    const done = (await s.store.expenses.get(expense.id))!;
    expect(done.extraction_status).toBe('failed');
    expect(done.extraction_job?.failure).toEqual({ reason: 'too_many_pages', message: 'the PDF has 500 pages; at most 50 are read' });
  });

  it('a pathological file that never finishes ends failed (timeout) at the time limit, and the extractor is told to stop', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    let aborted = false;
    const hang = new FakeExtractor(
      (input) =>
        new Promise(() => {
          input.signal?.addEventListener('abort', () => (aborted = true));
        }),
    );
    expect(await s.runner(hang, {}, 200).run(expense.id, expense.job_id!)).toBe('failed');
    expect(aborted).toBe(true);
    expect((await s.store.expenses.get(expense.id))!.extraction_job?.failure?.reason).toBe('timeout');
  });
});

describe('crash recovery (driven by hooks)', () => {
  it('a worker that dies after its claim leaves the job processing until its lease lapses; then a new worker takes it and completes it', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    const claimedLatch = latch();
    const crash = new Promise<never>(() => undefined); // the dying worker never gets past its claim
    const dying = s.runner(new FakeExtractor(ok('1.00')), { afterClaim: async () => (claimedLatch.open(), crash) });
    void dying.run(expense.id, expense.job_id!);
    await claimedLatch.opened;
    expect((await s.store.expenses.get(expense.id))!.extraction_status).toBe('processing');
    const recovering = s.runner(new FakeExtractor(ok('120.00')));
    // The recovery scan at start: nothing while the lease holds…
    expect(await recovering.dueJobs()).toEqual([]);
    s.clock.t += 6_001;
    // …the job once it lapsed.
    expect(await recovering.dueJobs()).toEqual([{ expenseId: expense.id, jobId: expense.job_id }]);
    expect(await recovering.run(expense.id, expense.job_id!)).toBe('completed');
    const done = (await s.store.expenses.get(expense.id))!;
    expect(done.extraction_status).toBe('completed');
    expect(done.extraction_job?.attempts).toBe(2);
    expect(done.totals.total).toBe('120.00');
  });

  it('a worker that comes back after its lease was taken over cannot overwrite the result', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    const atWrite = latch();
    const resume = latch();
    const slow = s.runner(new FakeExtractor(ok('1.00')), { beforeWrite: async () => (atWrite.open(), resume.opened) });
    const late = slow.run(expense.id, expense.job_id!);
    await atWrite.opened;
    s.clock.t += 6_001;
    expect(await s.runner(new FakeExtractor(ok('120.00'))).run(expense.id, expense.job_id!)).toBe('completed');
    resume.open();
    expect(await late).toBe('superseded');
    expect((await s.store.expenses.get(expense.id))!.totals.total).toBe('120.00');
  });

  it('a job whose worker keeps dying ends failed (crashed: it killed its sandbox twice), never stuck in processing', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    for (let attempt = 0; attempt < MAX_SANDBOX_KILLS; attempt++) {
      const claimedLatch = latch();
      void s.runner(new FakeExtractor(ok()), { afterClaim: async () => (claimedLatch.open(), new Promise<never>(() => undefined)) }).run(expense.id, expense.job_id!);
      await claimedLatch.opened;
      s.clock.t += 6_001;
    }
    expect(await s.runner(new FakeExtractor(ok())).run(expense.id, expense.job_id!)).toBe('failed');
    expect((await s.store.expenses.get(expense.id))!.extraction_job?.failure?.reason).toBe('crashed');
  });
});

describe('retry_extraction', () => {
  it('422 extraction_in_progress while the job is pending and while it runs; no quota unit is taken', async () => {
    const s = setup();
    const expense = await uploadOne(s, 2);
    await expect(s.files.retry(tenant, expense.id, 2)).rejects.toMatchObject({ code: 'extraction_in_progress' });
    const atWrite = latch();
    const resume = latch();
    const running = s.runner(new FakeExtractor(ok()), { beforeWrite: async () => (atWrite.open(), resume.opened) }).run(expense.id, expense.job_id!);
    await atWrite.opened;
    await expect(s.files.retry(tenant, expense.id, 2)).rejects.toMatchObject({ code: 'extraction_in_progress' });
    resume.open();
    expect(await running).toBe('completed');
    expect(await s.quota.used(tenant, s.clock.now())).toBe(1);
  });

  it('the cooldown applies after a failed job too, then the escalated retry is allowed', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    expect(await s.runner(new FakeExtractor(async () => Promise.reject(new ExtractionFailure('unreadable', 'noise')))).run(expense.id, expense.job_id!)).toBe('failed');
    await expect(s.files.retry(tenant, expense.id, 10)).rejects.toMatchObject({ code: 'retry_cooldown' });
    s.clock.t += 60_000;
    expect(await s.files.retry(tenant, expense.id, 10)).toMatchObject({ extraction_status: 'pending', rejected_job_id: expense.job_id, extraction_job: { tier: 'escalated' } });
  });

  it('two retries racing (both past the first check, driven by a latch): one writes its job, the other is refused and its unit is given back', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    await s.runner(new FakeExtractor(ok())).run(expense.id, expense.job_id!);
    s.clock.t += 60_000;
    const bothTook = latch();
    let took = 0;
    s.quota.hooks.afterTake = async () => {
      if (++took === 2) bothTook.open();
      await bothTook.opened;
    };
    const results = await Promise.allSettled([s.files.retry(tenant, expense.id, 10), s.files.retry(tenant, expense.id, 10)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'extraction_in_progress' });
    const after = (await s.store.expenses.get(expense.id))!;
    expect(after.outbox!.filter((e) => e.type === EXTRACTION_REQUESTED)).toHaveLength(2); // the upload's job and one retry
    expect(await s.quota.used(tenant, s.clock.now())).toBe(2);
  });

  it('the cooldown after a completion, then allowed; a retry under the same key is not applied twice', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    await s.runner(new FakeExtractor(ok())).run(expense.id, expense.job_id!);
    await expect(s.files.retry(tenant, expense.id, 10)).rejects.toMatchObject({ code: 'retry_cooldown' });
    s.clock.t += 60_000;
    const token = { key: 'k1', fingerprint: 'f1' };
    const first = await s.files.retry(tenant, expense.id, 10, token);
    const again = await s.files.retry(tenant, expense.id, 10, token);
    expect(again.job_id).toBe(first.job_id);
  });

  it('402 extraction_quota_exhausted when the month’s extractions are used up', async () => {
    const s = setup();
    const expense = await uploadOne(s, 1);
    await s.runner(new FakeExtractor(ok())).run(expense.id, expense.job_id!);
    s.clock.t += 60_000;
    await expect(s.files.retry(tenant, expense.id, 1)).rejects.toMatchObject({ code: 'extraction_quota_exhausted' });
  });
});

describe('quota and job commit together (crash between the two steps, driven by a hook)', () => {
  const never = () => new Promise<void>(() => undefined);

  it('an upload that dies after taking its unit, before writing its job: the unit is given back once the hold outlives its grace', async () => {
    const s = setup();
    const tookIt = latch();
    s.quota.hooks.afterTake = async () => {
      tookIt.open();
      return never(); // the process dies here
    };
    void uploadOne(s);
    await tookIt.opened;
    s.quota.hooks.afterTake = undefined;
    expect(await s.quota.used(tenant, s.clock.now())).toBe(1);
    expect(await s.files.reconcileQuota(60_000)).toEqual({ committed: 0, returned: 0 }); // still within its grace
    s.clock.t += 60_000;
    expect(await s.files.reconcileQuota(60_000)).toEqual({ committed: 0, returned: 1 });
    expect(await s.quota.used(tenant, s.clock.now())).toBe(0);
    expect(await s.store.expenses.count({ extraction_status: 'pending' })).toBe(0);
  });

  it('a retry that dies after taking its unit: given back; the expense keeps its previous job', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    await s.runner(new FakeExtractor(ok())).run(expense.id, expense.job_id!);
    s.clock.t += 60_000;
    const tookIt = latch();
    s.quota.hooks.afterTake = async () => (tookIt.open(), never());
    void s.files.retry(tenant, expense.id, 10);
    await tookIt.opened;
    s.quota.hooks.afterTake = undefined;
    expect(await s.quota.used(tenant, s.clock.now())).toBe(2);
    s.clock.t += 60_000;
    await s.files.reconcileQuota(60_000);
    expect(await s.quota.used(tenant, s.clock.now())).toBe(1);
    expect((await s.store.expenses.get(expense.id))!).toMatchObject({ extraction_status: 'completed', job_id: expense.job_id });
  });

  it('a request that dies after writing its job, before committing: reconcile keeps the unit (the job exists)', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    // The hold as a dead request leaves it: taken for the job that was written, never committed.
    await s.quota.take(tenant, 10, s.clock.now(), { jobId: expense.job_id!, expenseId: expense.id });
    s.clock.t += 60_000;
    expect(await s.files.reconcileQuota(60_000)).toEqual({ committed: 1, returned: 0 });
    expect(await s.quota.used(tenant, s.clock.now())).toBe(2);
  });

  it('a request slower than the grace: reconcile gives its unit back, the job is then written and charged again — one unit per job', async () => {
    const s = setup();
    const tookIt = latch();
    const resume = latch();
    s.quota.hooks.afterTake = async () => (tookIt.open(), resume.opened);
    const slow = uploadOne(s);
    await tookIt.opened;
    s.clock.t += 60_000;
    expect(await s.files.reconcileQuota(60_000)).toEqual({ committed: 0, returned: 1 });
    resume.open();
    expect(await slow).toMatchObject({ extraction_status: 'pending' });
    expect(await s.quota.used(tenant, s.clock.now())).toBe(1);
  });
});
