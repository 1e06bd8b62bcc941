// The extraction job runner and the upload/retry use cases (services/expenses/domain/extraction-runner.ts,
// expense-files.ts) on a real SQLite store and filesystem blobs, with a fake Extractor: the result is
// written, a failure ends `failed` with its reason within the time limit, a job interrupted by a crash
// (driven by hooks, never sleeps) is taken again after its lease and never left in processing, a retry
// supersedes a running job, and the outbox carries one extraction_requested event per job.
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
  it('stores the expense pending with one extraction_requested event in its outbox', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    expect(expense.extraction_status).toBe('pending');
    expect(expense.outbox).toHaveLength(1);
    expect(expense.outbox![0]).toMatchObject({ type: EXTRACTION_REQUESTED, payload: { extraction_requested: { expense_id: expense.id, job_id: expense.job_id, tier: 'standard' } } });
  });

  it('a refused file leaves no expense', async () => {
    const s = setup();
    await expect(s.files.upload({ tenant, filename: 'x.pdf', declaredType: 'application/pdf', allowance: 10 }, chunks(Buffer.from('%PDF-1.7\nnothing')))).rejects.toMatchObject({ code: 'file_corrupt' });
    expect(await s.store.expenses.count({})).toBe(0);
  });

  it('quota used up: manual, no job, no event', async () => {
    const s = setup();
    await uploadOne(s, 1);
    const second = await uploadOne(s, 1);
    expect(second).toMatchObject({ extraction_status: 'manual', job_id: null });
    expect(second.outbox ?? []).toHaveLength(0);
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
  it('a retry while the job runs supersedes it: the old result is discarded, the escalated job runs and completes', async () => {
    const s = setup();
    const expense = await uploadOne(s);
    const atWrite = latch();
    const resume = latch();
    const old = s.runner(new FakeExtractor(ok('1.00')), { beforeWrite: async () => (atWrite.open(), resume.opened) }).run(expense.id, expense.job_id!);
    await atWrite.opened;
    const retried = await s.files.retry(tenant, expense.id, 10);
    expect(retried).toMatchObject({ extraction_status: 'pending', rejected_job_id: expense.job_id });
    expect(retried.outbox!.at(-1)).toMatchObject({ payload: { extraction_requested: { job_id: retried.job_id, tier: 'escalated', rejected_job_id: expense.job_id } } });
    resume.open();
    expect(await old).toBe('superseded');
    const escalated = new FakeExtractor(ok('120.00'));
    expect(await s.runner(escalated).run(expense.id, retried.job_id!)).toBe('completed');
    expect(escalated.calls[0].tier).toBe('escalated');
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
    await expect(s.files.retry(tenant, expense.id, 1)).rejects.toMatchObject({ code: 'extraction_quota_exhausted' });
  });
});
