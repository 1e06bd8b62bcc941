// Wires the expenses service: its store, the contacts service as the supplier directory, the documents
// service for the workspace's default currency, the blob store
// for files, the extraction job machinery (outbox relay to invoicing.expenses.v1, the worker that runs
// jobs through the Extractor), and its handlers to gRPC.
import { ExpensesServiceService } from '../../gen/invoicing/expenses/v1/expenses';
import { readEnv } from '../shared/config';
import { implement, restrict } from '../shared/grpc/typed';
import { ServiceModule } from '../shared/module';
import { outboxRelayOptions } from '../shared/outbox/options';
import { OutboxRelay } from '../shared/outbox/relay';
import { CursorCodec } from '../shared/pagination';
import { ExtractionWorker } from './adapters/extraction-worker';
import { expensesOutbox, expensesStore } from './adapters/expenses-store';
import { fileInspector } from './adapters/file-inspector';
import { GrpcSuppliers } from './adapters/grpc-suppliers';
import { GrpcWorkspaceSettings } from './adapters/grpc-workspace-settings';
import { UploadSweepTimer } from './adapters/upload-sweep-timer';
import { ContactsSupplierMatcher } from './adapters/supplier-matcher';
import { ExpenseFiles } from './domain/expense-files';
import { ExtractionQuota, quotaCountersSpec } from './domain/extraction-quota';
import { ExtractionQueue, extractionLanes, extractionLanesSpec } from './domain/extraction-queue';
import { ExtractionRunner } from './domain/extraction-runner';
import { Expenses } from './domain/expenses';
import { UploadSweeper } from './domain/upload-sweeper';
import { extractorOptionsFromEnv } from './extraction';
import { extractionSandbox, sandboxedExtractor } from './extraction/sandboxed';
import { expensesHandlers } from './grpc/handlers';

/** Settings of the extraction jobs (docs/expenses.md, "Configuration"). */
export function readExtractionConfig(env: NodeJS.ProcessEnv = process.env) {
  const { int, optional } = readEnv(env);
  const timeLimitMs = Math.max(1000, int('EXTRACTION_JOB_TIMEOUT_MS', 120_000));
  return {
    concurrency: Math.max(1, int('EXTRACTION_CONCURRENCY', 1)),
    // Jobs of one workspace running at once, over all replicas (docs/expenses.md "Fair sharing").
    perWorkspace: Math.max(1, int('EXTRACTION_WORKSPACE_CONCURRENCY', 2)),
    timeLimitMs,
    // Longer than the time limit: a live worker never loses its claim; a dead one's job is taken again after it.
    leaseMs: timeLimitMs + Math.max(1000, int('EXTRACTION_LEASE_MARGIN_MS', 30_000)),
    pollMs: Math.max(100, int('EXTRACTION_POLL_MS', 2000)),
    retryCooldownMs: Math.max(0, int('EXTRACTION_RETRY_COOLDOWN_MS', 300_000)),
    // A quota unit held this long without its job being committed is settled by the sweep (extraction-quota.ts).
    quotaHoldGraceMs: Math.max(1000, int('EXTRACTION_QUOTA_HOLD_GRACE_MS', 60_000)),
    // Resident memory of one extraction sandbox process (docs/extraction.md "Sandbox").
    sandboxMemoryMb: Math.max(128, int('EXTRACTION_SANDBOX_MEMORY_MB', 1536)),
    worker: optional('EXTRACTION_WORKER') !== 'off',
  };
}

/** The sweep of abandoned uploads (docs/expenses.md, "Orphaned files"). */
export function readUploadSweepConfig(env: NodeJS.ProcessEnv = process.env) {
  const { int } = readEnv(env);
  return {
    graceMs: Math.max(1000, int('EXPENSE_UPLOAD_GRACE_MS', 900_000)),
    intervalMs: Math.max(1000, int('EXPENSE_UPLOAD_SWEEP_MS', 300_000)),
  };
}

export const expensesModule: ServiceModule = {
  name: 'expenses',
  needs: { secrets: ['cursorSecret'], blobs: true, peers: ['contacts', 'documents'] },
  async create({ adapters, secrets, log, peers }) {
    const config = readExtractionConfig();
    const clock = { now: () => new Date() };
    const store = expensesStore(adapters.store);
    const suppliers = new GrpcSuppliers(peers.contacts);
    const workspace = new GrpcWorkspaceSettings(peers.documents);
    const relay = new OutboxRelay(
      [expensesOutbox(store.expenses)],
      adapters.bus,
      log,
      outboxRelayOptions(),
    );
    const expenses = new Expenses(store, suppliers, workspace, clock, { written: () => relay.notify() });
    const quota = new ExtractionQuota(adapters.store.collection(quotaCountersSpec), () => adapters.store.nextId('expenses.quota'));
    const lanes = extractionLanes(adapters.store.collection(extractionLanesSpec), () => adapters.store.nextId('expenses.extraction_lanes'));
    const queue = new ExtractionQueue(store, lanes, clock, { perWorkspace: config.perWorkspace, leaseMs: config.leaseMs });
    const files = new ExpenseFiles(store, adapters.blobs, fileInspector, quota, clock, {
      retryCooldownMs: config.retryCooldownMs,
      onQueued: async (expense) => {
        await queue.queued(expense).catch((err: unknown) => log.warn({ err: String(err) }, 'extraction lane not touched; the repair scan will'));
        relay.notify();
      },
    });
    // Files are parsed in sandbox processes, never on this event loop (docs/extraction.md "Sandbox").
    const extractorOptions = extractorOptionsFromEnv();
    const sandboxSettings = { memoryMb: config.sandboxMemoryMb, size: config.concurrency };
    const extractor = sandboxedExtractor(extractionSandbox(extractorOptions, sandboxSettings), extractorOptions, sandboxSettings);
    const matcher = new ContactsSupplierMatcher(suppliers);
    const runner = new ExtractionRunner(store, adapters.blobs, extractor, matcher, clock, { timeLimitMs: config.timeLimitMs, leaseMs: config.leaseMs });
    const worker = new ExtractionWorker(runner, queue, adapters.bus, log.child({ component: 'extraction' }), { concurrency: config.concurrency, pollMs: config.pollMs });
    relay.start();
    if (config.worker) await worker.start();
    const sweepConfig = readUploadSweepConfig();
    const sweeper = new UploadSweepTimer(
      new UploadSweeper(store, adapters.blobs, clock, { graceMs: sweepConfig.graceMs }),
      () => files.reconcileQuota(config.quotaHoldGraceMs),
      log.child({ component: 'upload-sweeper' }),
      sweepConfig.intervalMs,
    );
    sweeper.start();
    const cursors = new CursorCodec(secrets.cursorSecret);
    return {
      bindings: [
        restrict(implement('invoicing.expenses.v1.ExpensesService', ExpensesServiceService, expensesHandlers(expenses, files, cursors), log), {
          callers: ['gateway'],
        }),
      ],
      stop: async () => {
        await worker.stop();
        await sweeper.stop();
        await relay.stop();
        await extractor.close?.();
        suppliers.close();
        workspace.close();
      },
    };
  },
};
