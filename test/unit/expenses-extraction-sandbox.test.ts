// Extraction in a sandbox it can kill (issue #17 "Frozen process"; docs/extraction.md "Sandbox"):
// the sandboxed extractor reads the corpus exactly as the in-process extractor does; the PDF that froze
// the service is killed at its time limit while this event loop keeps turning; a sandbox kill ends the
// job `failed` with its reason; and kills are counted on the job record with the lease, so a job whose
// process died under it twice is not offered a third time (driven by hooks, never sleeps).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileInspector } from '../../services/expenses/adapters/file-inspector';
import { expensesStore } from '../../services/expenses/adapters/expenses-store';
import { ExpenseFiles } from '../../services/expenses/domain/expense-files';
import { MAX_ATTEMPTS, MAX_SANDBOX_KILLS } from '../../services/expenses/domain/extraction-job';
import { ExtractionQuota, quotaCountersSpec } from '../../services/expenses/domain/extraction-quota';
import { ExtractionRunner, RunnerHooks } from '../../services/expenses/domain/extraction-runner';
import { createExtractor, ExtractorOptions } from '../../services/expenses/extraction';
import { asFailure, extractionSandbox, sandboxedExtractor, SandboxSettings } from '../../services/expenses/extraction/sandboxed';
import { ExpensesStore } from '../../services/expenses/ports/expenses-store';
import { ExtractionFailure, ExtractionInput, ExtractionResult, Extractor } from '../../services/expenses/ports/extractor';
import { FsBlobStore } from '../../services/shared/blobs/fs';
import { SandboxKilled, SandboxTaskError } from '../../services/shared/sandbox/port';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { pdfFile, textOperatorBomb } from '../support/expense-files';
import { CorpusEntry, makeCorpus } from '../support/extraction-corpus/render';

jest.setTimeout(300_000);

const tenant = { account_id: 7, livemode: true };

async function failure(promise: Promise<unknown>): Promise<ExtractionFailure> {
  const error = await promise.then(
    () => null,
    (e) => e,
  );
  expect(error).toBeInstanceOf(ExtractionFailure);
  return error as ExtractionFailure;
}

describe('the sandboxed extractor reads exactly what the in-process extractor reads', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sandbox-corpus-'));
  const settings: SandboxSettings = { memoryMb: 1536, size: 1 };
  let inProcess: Extractor;
  let sandboxed: Extractor;
  let corpus: CorpusEntry[];

  beforeAll(async () => {
    inProcess = createExtractor();
    sandboxed = sandboxedExtractor(extractionSandbox({}, settings), {}, settings);
    // A text PDF, a clean image and a scanned PDF: the text layer, sharp + OCR, PDF.js images + OCR.
    corpus = await makeCorpus({ dir, seed: 7, documents: 2, pick: (doc, kind) => (kind === 'text_pdf' && doc.lang === 'sk') || (kind === 'image' && doc.lang === 'cs') || (kind === 'scan_pdf' && doc.lang === 'sk') });
  });
  afterAll(async () => {
    await inProcess?.close?.();
    await sandboxed?.close?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('same fields, confidence, method and pages on every kind of file', async () => {
    expect(corpus.map((e) => e.kind).sort()).toEqual(['image', 'scan_pdf', 'text_pdf']);
    for (const entry of corpus) {
      const input: ExtractionInput = { bytes: readFileSync(entry.file), contentType: entry.file.endsWith('.pdf') ? 'application/pdf' : entry.file.endsWith('.png') ? 'image/png' : 'image/jpeg', tier: 'standard' };
      expect(await sandboxed.extract(input)).toEqual(await inProcess.extract(input));
    }
  });

  it('the extractor’s own failures come back with their reason', async () => {
    const refused = await failure(sandboxed.extract({ bytes: new Uint8Array(0), contentType: 'application/pdf', tier: 'standard' }));
    expect(refused.reason).toBe('unreadable');
    expect(refused.message).toBe('the file is empty');
  });
});

describe('the PDF that froze the service (10 million `(AB)\'` operators) is killed at the time limit; this event loop keeps turning', () => {
  it('fails with timeout at the wall-clock limit, not after PDF.js finished', async () => {
    const options: ExtractorOptions = { timeoutMs: { standard: 1500, escalated: 4500 } };
    const settings: SandboxSettings = { memoryMb: 1024, size: 1, graceMs: 500 };
    const extractor = sandboxedExtractor(extractionSandbox(options, settings), options, settings);
    try {
      const bomb = await textOperatorBomb();
      // Warm the sandbox first, so what is measured below is the job, not loading PDF.js.
      await extractor.extract({ bytes: await pdfFile(), contentType: 'application/pdf', tier: 'standard' });
      let turns = 0;
      let turning = true;
      const turn = () => {
        turns++;
        if (turning) setImmediate(turn);
      };
      setImmediate(turn);
      const started = Date.now();
      const failed = await failure(extractor.extract({ bytes: bomb, contentType: 'application/pdf', tier: 'standard' }));
      const took = Date.now() - started;
      turning = false;
      expect(failed.reason).toBe('timeout');
      // Killed at 1.5 s + 0.5 s grace; PDF.js alone needs ~15 s of CPU for this file.
      expect(took).toBeLessThan(2000 + 5000);
      // A frozen loop turns a handful of times; this one was free throughout.
      expect(turns).toBeGreaterThan(100);
      // The next file gets a fresh sandbox.
      expect((await extractor.extract({ bytes: await pdfFile(), contentType: 'application/pdf', tier: 'standard' })).method).toBe('text_layer');
    } finally {
      await extractor.close?.();
    }
  });
});

describe('sandbox kills become the port’s failure reasons', () => {
  it.each([
    ['memory_limit', new SandboxKilled('memory_limit', 'used 2000 MB'), 'memory_limit'],
    ['crashed', new SandboxKilled('crashed', 'signal SIGSEGV'), 'crashed'],
    ['timeout', new SandboxKilled('timeout', 'past 60000 ms'), 'timeout'],
    ['aborted (the job’s time limit)', new SandboxKilled('aborted', 'stopped by its caller'), 'timeout'],
    ['an ExtractionFailure from inside', new SandboxTaskError('ExtractionFailure', 'the PDF has 500 pages', 'too_many_pages'), 'too_many_pages'],
    ['any other error from inside', new SandboxTaskError('TypeError', 'x is undefined', undefined), 'unreadable'],
  ])('%s', (_name, error, reason) => {
    expect(asFailure(error).reason).toBe(reason);
  });
});

// ---- the job record: kills counted with the lease ----

class FakeExtractor implements Extractor {
  calls = 0;
  constructor(private readonly behave: (input: ExtractionInput) => Promise<ExtractionResult>) {}
  extract(input: ExtractionInput) {
    this.calls++;
    return this.behave(input);
  }
}

const answer = async (): Promise<ExtractionResult> => ({
  fields: {
    supplier: { name: 'Papiernictvo Nova s.r.o.', registration_id: null, tax_id: null, vat_id: null, address: { street: null, municipality: null, postal_code: null, country_alpha2: null } },
    document_number: '2026-0042',
    issue_date: null,
    due_date: null,
    currency: 'EUR',
    subtotal: null,
    vat_total: null,
    total: '120.00',
    vat_breakdown: [],
    iban: null,
    bic: null,
    variable_symbol: null,
    line_items: [],
  },
  confidence: { total: 0.9 },
  method: 'text_layer',
  pages: 1,
});

function setup() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sandbox-kills-'));
  const db = new SqliteDocumentStore(path.join(dir, 'store.db'));
  const store: ExpensesStore = expensesStore(db);
  const fsBlobs = new FsBlobStore(path.join(dir, 'blobs'), 'secret-for-tests');
  const outage = { blobs: false };
  // The blob store as a flaky network store: reads fail while `outage.blobs` is set.
  const blobs = Object.assign(Object.create(fsBlobs) as FsBlobStore, {
    get: (key: string) => (outage.blobs ? Promise.reject(new Error('blob store unavailable')) : fsBlobs.get(key)),
  });
  const clock = { t: Date.parse('2026-11-23T10:00:00Z'), now: () => new Date(clock.t) };
  const quota = new ExtractionQuota(db.collection(quotaCountersSpec), () => db.nextId('quota'));
  const files = new ExpenseFiles(store, blobs, fileInspector, quota, clock, { retryCooldownMs: 60_000 });
  const suppliers = { match: async () => null };
  const runner = (extractor: Extractor, hooks: RunnerHooks = {}) => new ExtractionRunner(store, blobs, extractor, suppliers, clock, { timeLimitMs: 5_000, leaseMs: 6_000 }, hooks);
  const upload = async () => {
    const file = await pdfFile();
    return files.upload({ tenant, filename: 'invoice.pdf', declaredType: 'application/pdf', allowance: 10 }, (async function* () {
      yield file;
    })());
  };
  const job = async (id: number) => (await store.expenses.get(id))!;
  return { store, clock, outage, runner, upload, job };
}

/** A runner whose process dies right after its claim: the afterClaim hook never returns. */
function dyingAfterClaim(s: ReturnType<typeof setup>) {
  let claimedIt!: () => void;
  const claimed = new Promise<void>((resolve) => (claimedIt = resolve));
  const extractor = new FakeExtractor(answer);
  return { extractor, claimed, run: (id: number, jobId: string) => void s.runner(extractor, { afterClaim: async () => (claimedIt(), new Promise<never>(() => undefined)) }).run(id, jobId) };
}

describe('sandbox kills on the job record (MAX_SANDBOX_KILLS)', () => {
  it('a sandbox killed at its memory limit ends the job failed (memory_limit) at once; the kill stays counted', async () => {
    const s = setup();
    const expense = await s.upload();
    const killed = new FakeExtractor(() => Promise.reject(new ExtractionFailure('memory_limit', 'extraction was stopped at its memory limit')));
    const runner = s.runner(killed);
    expect(await runner.run(expense.id, expense.job_id!)).toBe('failed');
    const done = await s.job(expense.id);
    expect(done.extraction_job).toMatchObject({ attempts: 1, sandbox_kills: 1, failure: { reason: 'memory_limit' } });
    // Not offered again: a redelivered event or a later scan finds it finished.
    s.clock.t += 60_000;
    expect(await runner.dueJobs()).toEqual([]);
    await runner.run(expense.id, expense.job_id!);
    expect(killed.calls).toBe(1);
  });

  it('the kill is counted in the same write as the lease, before the file is touched; an answer takes it back', async () => {
    const s = setup();
    const expense = await s.upload();
    let atClaim: number | undefined;
    const runner = s.runner(new FakeExtractor(answer), { afterClaim: async () => void (atClaim = (await s.job(expense.id)).extraction_job?.sandbox_kills) });
    expect(await runner.run(expense.id, expense.job_id!)).toBe('completed');
    expect(atClaim).toBe(1);
    expect((await s.job(expense.id)).extraction_job?.sandbox_kills).toBe(0);
  });

  it(`a job whose process died under it ${MAX_SANDBOX_KILLS} times is not offered a third time: failed (crashed)`, async () => {
    const s = setup();
    const expense = await s.upload();
    for (let death = 1; death <= MAX_SANDBOX_KILLS; death++) {
      const dying = dyingAfterClaim(s);
      dying.run(expense.id, expense.job_id!);
      await dying.claimed;
      expect((await s.job(expense.id)).extraction_job).toMatchObject({ attempts: death, sandbox_kills: death });
      s.clock.t += 6_001; // its lease lapses: the process is gone
    }
    const third = new FakeExtractor(answer);
    expect(await s.runner(third).run(expense.id, expense.job_id!)).toBe('failed');
    expect(third.calls).toBe(0);
    const done = await s.job(expense.id);
    expect(done.extraction_status).toBe('failed');
    expect(done.extraction_job).toMatchObject({ attempts: MAX_SANDBOX_KILLS, sandbox_kills: MAX_SANDBOX_KILLS, failure: { reason: 'crashed' } });
  });

  it('one death, then an answer: the second attempt completes (one kill on record)', async () => {
    const s = setup();
    const expense = await s.upload();
    const dying = dyingAfterClaim(s);
    dying.run(expense.id, expense.job_id!);
    await dying.claimed;
    s.clock.t += 6_001;
    expect(await s.runner(new FakeExtractor(answer)).run(expense.id, expense.job_id!)).toBe('completed');
    expect((await s.job(expense.id)).extraction_job).toMatchObject({ attempts: 2, sandbox_kills: 1 });
  });

  it(`a dependency outage is no kill: the count is taken back, and the job ends interrupted after ${MAX_ATTEMPTS} attempts`, async () => {
    const s = setup();
    const expense = await s.upload();
    s.outage.blobs = true;
    const extractor = new FakeExtractor(answer);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      await expect(s.runner(extractor).run(expense.id, expense.job_id!)).rejects.toThrow('blob store unavailable');
      expect((await s.job(expense.id)).extraction_job).toMatchObject({ attempts: attempt, sandbox_kills: 0 });
      s.clock.t += 6_001;
    }
    expect(await s.runner(extractor).run(expense.id, expense.job_id!)).toBe('failed');
    expect((await s.job(expense.id)).extraction_job?.failure?.reason).toBe('interrupted');
    expect(extractor.calls).toBe(0);
  });
});
