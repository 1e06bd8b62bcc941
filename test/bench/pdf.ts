// `npm run bench` (second part; alone: node dist/test/bench/pdf.js): PDFs, the targets of issue #9.
//   - cached PDF download (GET …/invoices/<id>/pdf of an unchanged, stored PDF) and the 304 answer to
//     If-None-Match, each as a ratio against the naive chain (pdf-baseline.ts: express + one unary
//     gRPC call returning the same PDF as a constant), slices interleaved in the same run (targets
//     ≥ 0.5 and ≥ 0.8): the median of the per-cycle throughput ratios, and beside it the ratio of
//     server CPU per request (the steadiest figure on a shared machine);
//   - whether the first download after issue is served from storage (pre-rendered on the event);
//   - warm render throughput of the Chromium pool (default size 2) in pages/s (median of repeated
//     windows), with render p50/p99 (target ≥ 15 pages/s);
//   - resident memory of the rendering service with its Chromium: the rendering service started as its
//     own process (SERVICE=rendering, distributed mode, when MONGO_URL and KAFKA_BROKERS are set — the
//     engines env) rendering documents of the embedded system, PSS of it and its Chromium processes
//     summed (target ≤ 600 MB); without the engines, the whole embedded process as an upper bound.
// Method as in run.ts: loopback, servers pinned to core 0 and the load generator to core 1 when
// possible; each setup warmed; slices of BENCH_SLICE_MS in a shuffled order per cycle. Report:
// .bench/pdf-report.md and .json. Settings: BENCH_PDF_CYCLES (7), BENCH_SLICE_MS (1500),
// BENCH_PDF_CONNECTIONS (8), BENCH_RENDER_S (12, in 4 windows), RENDER_POOL_SIZE (2), CHROMIUM_PATH,
// BENCH_PDF_PARTS (http,memory,render: a subset runs only those parts, e.g. `http` to repeat the
// ratios; a target of a part not run is reported as "not run").
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DocumentType } from '../../gen/invoicing/documents/v1/documents';
import { RenderDocumentPdfResponse, RenderingServiceService } from '../../gen/invoicing/rendering/v1/rendering';
import { ChromiumPool } from '../../services/rendering/adapters/chromium-pool';
import { handlebarsTemplate } from '../../services/rendering/adapters/handlebars-template';
import { Pdfs } from '../../services/rendering/domain/pdfs';
import { renderInput } from '../../services/rendering/domain/render-input';
import { connect } from '../../services/shared/grpc/typed';
import { createLogger } from '../../services/shared/logger';
import { isolatedMongoUrl, withoutEngines } from '../support/real-engines';
import { printable, workspace } from '../unit/rendering.fixtures';
import type { LoadConfig, LoadResult } from './load';
import { Proc, readyProcess } from './ready';
import { cpuTicks, processTree, systemTicks, TreeMemory, treeMemory } from './proc-stats';

const root = path.resolve(__dirname, '../../..');
const dist = (file: string) => path.join(root, 'dist', file);
const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const CYCLES = env('BENCH_PDF_CYCLES', 7);
const SLICE_MS = env('BENCH_SLICE_MS', 1500);
const CONNECTIONS = env('BENCH_PDF_CONNECTIONS', 8);
const RENDER_S = env('BENCH_RENDER_S', 12);
const RENDER_WINDOWS = 4;
const POOL_SIZE = env('RENDER_POOL_SIZE', 2);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PARTS = new Set((process.env.BENCH_PDF_PARTS ?? 'http,memory,render').split(',').map((p) => p.trim()));
const began = Date.now();
const work = mkdtempSync(path.join(os.tmpdir(), 'invoicing-bench-pdf-'));
const log = (line: string) => process.stderr.write(`[bench-pdf ${((Date.now() - began) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);

const pinning = (() => {
  if (os.cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return true;
  } catch {
    return false;
  }
})();
const children = new Set<ChildProcess>();
/** Children see no engine URLs unless given: the embedded system must not pick up the engines env. */
function spawnPinned(core: string, args: string[], extraEnv: Record<string, string> = {}): ChildProcess {
  const [cmd, argv] = pinning ? ['taskset', ['-c', core, process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(cmd, argv, { env: { ...withoutEngines(), ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function startServer(label: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Proc> {
  return readyProcess(spawnPinned('0', args, extraEnv), label);
}

interface Measured {
  result: LoadResult;
  /** CPU of the server process (all its threads) per request, µs. */
  cpuUsPerRequest: number;
  /** % of the machine's CPU during the measured window: stolen by the hypervisor, used by other processes. */
  stealPct: number;
  otherPct: number;
}

/** One load slice, with the server's CPU sampled on the load generator's measure-start/-end lines. */
function load(config: LoadConfig, serverPid: number): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawnPinned('1', [dist('test/bench/load.js'), JSON.stringify(config)]);
    let out = '';
    type Sample = { server: number; load: number; sys: ReturnType<typeof systemTicks> };
    let atStart: Sample | undefined;
    let atEnd: Sample | undefined;
    const sample = (): Sample => ({ server: cpuTicks(serverPid), load: cpuTicks(child.pid!), sys: systemTicks() });
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!atStart && out.includes('measure-start\n')) atStart = sample();
      if (!atEnd && out.includes('measure-end\n')) atEnd = sample();
    });
    child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{"result"'));
      if (!line || !atStart || !atEnd) return reject(new Error(`load generator failed (${code}): ${out.slice(-500)}`));
      const result = (JSON.parse(line) as { result: LoadResult }).result;
      const server = atEnd.server - atStart.server;
      const total = atEnd.sys.total - atStart.sys.total;
      const pct = (ticks: number) => (total > 0 ? (100 * ticks) / total : NaN);
      resolve({
        result,
        cpuUsPerRequest: result.requests ? (server * 10_000) / result.requests : NaN,
        stealPct: pct(atEnd.sys.steal - atStart.sys.steal),
        otherPct: pct(atEnd.sys.busy - atStart.sys.busy - server - (atEnd.load - atStart.load)),
      });
    });
  });
}

const median = (values: number[]) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : NaN;
};
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
};
const shuffle = <T>(items: T[]) => items.map((item) => [Math.random(), item] as const).sort((a, b) => a[0] - b[0]).map(([, item]) => item);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startEmbedded() {
  const dataDir = mkdtempSync(path.join(work, 'data-'));
  const proc = await startServer('embedded', [dist('deploy/embedded/main.js')], {
    DATA_DIR: dataDir,
    PORT: '0',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_GENERAL: '1000000000',
    RATE_LIMIT_PDF: '1000000000',
    CHROMIUM_PATH: CHROMIUM,
  });
  let token: string | undefined;
  let accountId: number | undefined;
  for (let i = 0; i < 100 && !(token && accountId); i++) {
    token = /Bearer (inv_pat_[A-Za-z0-9]+)/.exec(proc.stderr())?.[1];
    accountId = Number(/workspace (\d+)/.exec(proc.stderr())?.[1]) || undefined;
    if (!(token && accountId)) await sleep(50);
  }
  if (!token || !accountId) throw new Error(`no demo token in the embedded system's output:\n${proc.stderr().slice(-1000)}`);
  const base = `http://127.0.0.1:${proc.port}/api/v1/accounts/${accountId}`;
  const authorization = `Bearer ${token}`;
  const call = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(base + url, { method, headers: { authorization, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  return { proc, dataDir, accountId, authorization, base, call };
}

async function main(): Promise<void> {
  const notes: string[] = [];
  if (!pinning) notes.push('CPU pinning unavailable: server and load generator share cores.');
  log(`starting the embedded system (Chromium ${CHROMIUM}, pool ${POOL_SIZE})`);
  const sys = await startEmbedded();
  const purchaser = await sys.call('POST', '/contacts', { name: 'Bench', invoice_account: { name: 'Odběratel Bench s.r.o.' } });
  const bank = await sys.call('POST', '/bank_accounts', { name: 'Bench bank', iban: 'CZ6508000000192000145399', currency: 'czk' });
  if (bank.status !== 201) notes.push(`No bank account (${bank.status}): the measured PDF has no QR code.`);
  const invoiceBody = (variableSymbol: string) => ({
    purchaser_id: purchaser.body.invoice_account_id,
    variable_symbol: variableSymbol,
    ...(bank.status === 201 ? { bank_account_id: bank.body.id } : {}),
    line_items: Array.from({ length: 8 }, (_, i) => ({ name: `Položka ${i + 1} — vývoj`, quantity: String(i + 1), unit_price: '1250.50', vat_rate: i % 2 ? '12' : '21' })),
  });
  const invoice = await sys.call('POST', '/invoices', invoiceBody('2026001'));
  if (invoice.status !== 201) throw new Error(`invoice: ${invoice.status} ${JSON.stringify(invoice.body)}`);

  // First download after issue: is the PDF already in storage (pre-rendered on the issued event)?
  const pdfDir = path.join(sys.dataDir, 'blobs/pdfs', String(sys.accountId), 'live');
  const storedCount = () => (existsSync(pdfDir) ? readdirSync(pdfDir).filter((f) => f.endsWith('.pdf')).length : 0);
  const issuedAt = performance.now();
  const issued = await sys.call('POST', `/invoices/${invoice.body.id}/issue`);
  if (issued.status !== 200) throw new Error(`issue: ${issued.status}`);
  let preRenderedMs = NaN;
  for (let i = 0; i < 300 && !storedCount(); i++) await sleep(20);
  if (storedCount()) preRenderedMs = performance.now() - issuedAt;
  const fromStorage = storedCount() === 1;
  const firstAt = performance.now();
  const first = await fetch(`${sys.base}/invoices/${invoice.body.id}/pdf`, { headers: { authorization: sys.authorization } });
  const pdf = Buffer.from(await first.arrayBuffer());
  const firstMs = performance.now() - firstAt;
  // Rendered again on the download, the store would hold a second file (another ETag) or the same one.
  const renderedOnDownload = storedCount() !== 1;
  log(`first download after issue: ${first.status}, ${firstMs.toFixed(0)} ms, pre-rendered ${fromStorage ? `in ${preRenderedMs.toFixed(0)} ms after the issue call` : 'no'}`);
  const etag = first.headers.get('etag')!;
  const pdfPath = `/api/v1/accounts/${sys.accountId}/invoices/${invoice.body.id}/pdf`;

  const captured = path.join(work, 'pdf.pb');
  writeFileSync(captured, RenderDocumentPdfResponse.encode({ pdf, etag, filename: `Faktura ${issued.body.number}.pdf`, not_modified: false, from_store: true }).finish());
  const naive = await startServer('naive-pdf', [dist('test/bench/pdf-baseline.js'), captured]);

  const workloads: Array<{ key: string; proc: Proc; headers: Record<string, string> }> = [
    { key: 'naive PDF', proc: naive, headers: { Authorization: sys.authorization } },
    { key: 'cached PDF', proc: sys.proc, headers: { Authorization: sys.authorization } },
    { key: 'naive 304', proc: naive, headers: { Authorization: sys.authorization, 'If-None-Match': etag } },
    { key: '304', proc: sys.proc, headers: { Authorization: sys.authorization, 'If-None-Match': etag } },
  ];
  const run = (w: (typeof workloads)[number], warmupMs: number, durationMs: number) =>
    load({ port: w.proc.port, method: 'GET', path: pdfPath, headers: w.headers, connections: CONNECTIONS, warmupMs, durationMs }, w.proc.pid);
  if (PARTS.has('http')) for (const w of workloads) await run(w, 2000, 300);
  const slices: Array<{ cycle: number; key: string; m: Measured }> = [];
  for (let cycle = 1; PARTS.has('http') && cycle <= CYCLES; cycle++) {
    const line: string[] = [];
    for (const w of shuffle(workloads)) {
      const m = await run(w, 300, SLICE_MS);
      slices.push({ cycle, key: w.key, m });
      const bad = Object.keys(m.result.statuses).filter((s) => s !== '200' && s !== '304');
      if (bad.length) notes.push(`cycle ${cycle}: ${w.key} answered ${JSON.stringify(m.result.statuses)}`);
      line.push(`${w.key} ${m.result.rps.toFixed(0)}/s ${m.cpuUsPerRequest.toFixed(0)} µs`);
    }
    const busy = slices.filter((s) => s.cycle === cycle);
    log(`cycle ${cycle}/${CYCLES}: ${line.join(', ')} (steal ${median(busy.map((s) => s.m.stealPct)).toFixed(0)} %, other processes ${median(busy.map((s) => s.m.otherPct)).toFixed(0)} %)`);
  }
  /** Per cycle: ours ÷ the naive chain's throughput (and naive ÷ ours CPU per request); the median over cycles. */
  const ratios = (key: string, baseline: string) => {
    const pairs = slices
      .filter((s) => s.key === key)
      .map((s) => [s.m, slices.find((b) => b.cycle === s.cycle && b.key === baseline)?.m] as const)
      .filter((pair): pair is readonly [Measured, Measured] => pair[1] !== undefined);
    return {
      throughput: median(pairs.map(([m, b]) => m.result.rps / b.result.rps)),
      cpu: median(pairs.map(([m, b]) => b.cpuUsPerRequest / m.cpuUsPerRequest)),
    };
  };
  const rowOf = (key: string) => {
    const mine = slices.filter((s) => s.key === key).map((s) => s.m);
    return {
      rps: median(mine.map((m) => m.result.rps)),
      cpu_us_per_request: median(mine.map((m) => m.cpuUsPerRequest)),
      p50Ms: median(mine.map((m) => m.result.p50Ms)),
      p99Ms: median(mine.map((m) => m.result.p99Ms)),
    };
  };
  const machineLoad = {
    steal_pct: median(slices.map((s) => s.m.stealPct)),
    other_processes_pct: median(slices.map((s) => s.m.otherPct)),
    loadavg: os.loadavg().map((l) => Number(l.toFixed(1))),
  };
  const embeddedTree = processTree(sys.proc.pid);
  const embeddedMb = treeMemory(embeddedTree).residentMb;
  const embeddedChromiumMb = treeMemory(embeddedTree.slice(1)).residentMb;

  // The rendering service as its own process, rendering documents of the embedded system.
  const service = PARTS.has('memory') ? await renderingServiceMemory(sys, invoiceBody, notes) : null;
  naive.child.kill('SIGTERM');
  sys.proc.child.kill('SIGTERM');
  await sleep(500);

  // Warm render throughput: the pool alone (default size), fed as fast as it renders, in windows.
  const { pagesPerS, windows, latencies } = PARTS.has('render') ? await warmRender() : { pagesPerS: NaN, windows: [] as number[], latencies: [] as number[] };

  const r = { cached: ratios('cached PDF', 'naive PDF'), notModified: ratios('304', 'naive 304') };
  const memoryMb = service?.mb ?? embeddedMb;
  const report = {
    date: new Date().toISOString(),
    cpus: os.cpus().length,
    pinning,
    cycles: CYCLES,
    machine_load: machineLoad,
    pdf_bytes: pdf.length,
    rows: Object.fromEntries(workloads.map((w) => [w.key, rowOf(w.key)])),
    ratios: {
      'cached PDF × naive': r.cached.throughput,
      '304 × naive 304': r.notModified.throughput,
      'cached PDF × naive (CPU per request)': r.cached.cpu,
      '304 × naive 304 (CPU per request)': r.notModified.cpu,
    },
    first_download_after_issue: { served_from_storage: fromStorage && !renderedOnDownload, pre_rendered_ms: preRenderedMs, download_ms: firstMs },
    render: { pool_size: POOL_SIZE, pages_per_s: pagesPerS, windows_pages_per_s: windows, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), renders: latencies.length },
    memory_mb: {
      rendering_service_with_chromium: service?.mb ?? null,
      rendering_service_chromium: service?.chromiumMb ?? null,
      rendering_service_renders: service?.renders ?? null,
      rendering_service_detail: service?.detail ?? null,
      embedded_process_with_chromium: embeddedMb,
      embedded_chromium: embeddedChromiumMb,
    },
    notes,
  };
  const servedFromStorage = report.first_download_after_issue.served_from_storage;
  /** Median server CPU per request of a workload (all threads of its process), µs. */
  const cpuOf = (key: string) => report.rows[key].cpu_us_per_request.toFixed(0);
  const targets = [
    ['cached PDF download ≥ 0.5 × naive chain', r.cached.throughput >= 0.5, `${r.cached.throughput.toFixed(2)} (CPU/request ${r.cached.cpu.toFixed(2)}: ${cpuOf('cached PDF')} µs against ${cpuOf('naive PDF')} µs)`, PARTS.has('http')],
    ['304 ≥ 0.8 × naive chain', r.notModified.throughput >= 0.8, `${r.notModified.throughput.toFixed(2)} (CPU/request ${r.notModified.cpu.toFixed(2)}: ${cpuOf('304')} µs against ${cpuOf('naive 304')} µs)`, PARTS.has('http')],
    [`warm render ≥ 15 pages/s (pool ${POOL_SIZE})`, pagesPerS >= 15, `${pagesPerS.toFixed(1)} (p50 ${report.render.p50_ms.toFixed(0)} ms, p99 ${report.render.p99_ms.toFixed(0)} ms)`, PARTS.has('render')],
    ['first download after issue served from storage', servedFromStorage, servedFromStorage ? `yes (pre-rendered ${preRenderedMs.toFixed(0)} ms after the issue call; download ${firstMs.toFixed(0)} ms)` : 'no', true],
    [
      service ? 'rendering service + its Chromium ≤ 600 MB resident (SERVICE=rendering)' : 'rendering service + Chromium ≤ 600 MB resident (upper bound: the whole embedded process)',
      memoryMb <= 600,
      service
        ? `${service.mb.toFixed(0)} MB (Chromium ${service.chromiumMb.toFixed(0)} MB, ${service.processes} processes; peak over ${service.renders} renders; PSS ${service.detail?.pssMb.toFixed(0)}, RSS sum ${service.detail?.rssMb.toFixed(0)})`
        : `${embeddedMb.toFixed(0)} MB`,
      PARTS.has('memory'),
    ],
  ] as const;
  const md = [
    `# PDF benchmark (${report.date})`,
    '',
    `${report.cpus} CPUs, pinning ${pinning ? 'on' : 'off'}, ${CYCLES} interleaved cycles of ${SLICE_MS} ms slices, ${CONNECTIONS} connections, PDF ${pdf.length} bytes.`,
    `Machine load during the HTTP slices: load average ${machineLoad.loadavg.join(' / ')}, steal ${machineLoad.steal_pct.toFixed(0)} %, other processes ${machineLoad.other_processes_pct.toFixed(0)} % of the CPU (medians).`,
    '',
    ...targets.map(([what, met, value, ran]) => (ran ? `${met ? 'PASS' : 'FAIL'}  ${what}: ${value}` : `SKIP  ${what}: not run (BENCH_PDF_PARTS)`)),
    '',
    '| workload | req/s | server CPU µs/req | p50 ms | p99 ms |',
    '|---|---|---|---|---|',
    ...Object.entries(report.rows).map(([key, row]) => `| ${key} | ${row.rps.toFixed(0)} | ${row.cpu_us_per_request.toFixed(0)} | ${row.p50Ms.toFixed(2)} | ${row.p99Ms.toFixed(2)} |`),
    '',
    `Warm render: ${pagesPerS.toFixed(1)} pages/s (median of ${windows.map((w) => w.toFixed(1)).join(', ')}) with a pool of ${POOL_SIZE}; render p50 ${report.render.p50_ms.toFixed(0)} ms, p99 ${report.render.p99_ms.toFixed(0)} ms (${latencies.length} renders, ${POOL_SIZE * 2} concurrent).`,
    `Memory (resident, shared pages counted once: Σ private + the largest process's shared pages): ${service ? `the rendering service process with its Chromium ${service.mb.toFixed(0)} MB (Chromium ${service.chromiumMb.toFixed(0)} MB); ` : ''}the embedded process (every service and the gateway) with Chromium ${embeddedMb.toFixed(0)} MB, of which Chromium ${embeddedChromiumMb.toFixed(0)} MB.`,
    ...(notes.length ? ['', ...notes.map((n) => `- ${n}`)] : []),
    '',
  ].join('\n');
  const outDir = path.join(root, '.bench');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'pdf-report.json'), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(path.join(outDir, 'pdf-report.md'), md);
  process.stdout.write(md);
  rmSync(work, { recursive: true, force: true });
}

/** The Chromium pool alone (default size), fed as fast as it renders, in windows: pages/s and latencies. */
async function warmRender(): Promise<{ pagesPerS: number; windows: number[]; latencies: number[] }> {
  log(`warm render throughput: pool of ${POOL_SIZE}, ${RENDER_WINDOWS} windows of ${(RENDER_S / RENDER_WINDOWS).toFixed(1)} s`);
  // The pool's throughput with every page busy: one workspace alone is capped below it (fair sharing,
  // docs/rendering.md), so the cap is lifted here.
  const pool = new ChromiumPool({ executablePath: CHROMIUM, poolSize: POOL_SIZE, timeoutMs: 30_000, queueMax: 64, workspaceConcurrency: POOL_SIZE, log: createLogger('bench') });
  await pool.warm();
  const template = handlebarsTemplate();
  const pdfs = new Pdfs({ source: { document: async () => printable(), workspace: async () => workspace(), logo: async () => null }, template, renderer: pool, store: { get: async () => null, put: async () => undefined } });
  const html = await pdfs.html(renderInput({ account_id: 1, livemode: true }, printable(), workspace(), template.version));
  // Warm-up: the first renders of a page are several times slower (Chromium's caches, V8's JIT).
  await Promise.all(Array.from({ length: POOL_SIZE }, async () => {
    for (let i = 0; i < 10; i++) await pool.render(html);
  }));
  const latencies: number[] = [];
  const windows: number[] = [];
  const windowMs = (RENDER_S * 1000) / RENDER_WINDOWS;
  for (let w = 0; w < RENDER_WINDOWS; w++) {
    let done = 0;
    const end = performance.now() + windowMs;
    await Promise.all(
      Array.from({ length: POOL_SIZE * 2 }, async () => {
        while (performance.now() < end) {
          const t = performance.now();
          await pool.render(html);
          latencies.push(performance.now() - t);
          done++;
        }
      }),
    );
    windows.push(done / (windowMs / 1000));
  }
  const pagesPerS = median(windows);
  await pool.close();
  return { pagesPerS, windows, latencies };
}

/**
 * The rendering service started as its own distributed process (SERVICE=rendering; its own database
 * and Kafka namespace on the configured engines), its peers the embedded system's documents and
 * identity services: it renders RENDERS distinct invoices, 4 at a time; the peak PSS of the process and
 * its Chromium, sampled while it renders and after. null (with a note) without MONGO_URL/KAFKA_BROKERS.
 */
async function renderingServiceMemory(
  sys: Awaited<ReturnType<typeof startEmbedded>>,
  invoiceBody: (variableSymbol: string) => Record<string, unknown>,
  notes: string[],
): Promise<{ mb: number; chromiumMb: number; processes: number; detail: TreeMemory | null; renders: number } | null> {
  const RENDERS = 24;
  const { MONGO_URL, KAFKA_BROKERS } = process.env;
  if (!MONGO_URL || !KAFKA_BROKERS) {
    notes.push('The rendering service alone was not measured: MONGO_URL and KAFKA_BROKERS unset (source the engines env); the memory target uses the whole embedded process as its upper bound.');
    return null;
  }
  const runtime = JSON.parse(readFileSync(path.join(sys.dataDir, 'runtime.json'), 'utf8')) as { services: Record<string, string> };
  const engineEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => /^(MINIO_|KAFKA_BROKERS$)/.test(name)) as Array<[string, string]>,
  );
  const suffix = randomBytes(5).toString('hex');
  log('memory: starting the rendering service as its own process (SERVICE=rendering)');
  const start = () => startServer('rendering', [dist('deploy/distributed/main.js')], {
    ...engineEnv,
    SERVICE: 'rendering',
    MONGO_URL: isolatedMongoUrl(MONGO_URL, `bench_${suffix}`),
    KAFKA_TOPIC_PREFIX: `bench_${suffix}.`,
    IDENTITY_ADDR: runtime.services.identity,
    DOCUMENTS_ADDR: runtime.services.documents,
    JWT_SECRET: randomBytes(32).toString('base64url'),
    CURSOR_SECRET: randomBytes(32).toString('base64url'),
    URL_SECRET: randomBytes(32).toString('base64url'),
    CHROMIUM_PATH: CHROMIUM,
    LOG_LEVEL: 'warn',
  });
  // On a loaded machine a first start can miss its engines' timeouts (Kafka coordinator, Mongo server
  // selection): one retry, then the upper bound with a note rather than no report.
  let proc: Proc;
  try {
    proc = await start().catch(() => start());
  } catch (err) {
    notes.push(`The rendering service process did not start (${String(err).split('\n').slice(0, 3).join(' ').slice(0, 300)}); the memory target uses the whole embedded process as its upper bound.`);
    return null;
  }
  const client = connect(RenderingServiceService, 'invoicing.rendering.v1.RenderingService', `127.0.0.1:${proc.port}`);
  try {
    const ids: number[] = [];
    for (let i = 0; i < RENDERS; i++) {
      const created = await sys.call('POST', '/invoices', invoiceBody(String(3000 + i)));
      if (created.status !== 201) throw new Error(`invoice: ${created.status}`);
      ids.push(created.body.id);
    }
    let peak = { mb: 0, chromiumMb: 0, processes: 0, detail: null as TreeMemory | null };
    const sample = () => {
      const tree = processTree(proc.pid);
      const detail = treeMemory(tree);
      if (detail.residentMb > peak.mb) peak = { mb: detail.residentMb, chromiumMb: treeMemory(tree.slice(1)).residentMb, processes: tree.length, detail };
    };
    const sampler = setInterval(sample, 250);
    const tenant = { account_id: sys.accountId, livemode: true };
    let next = 0;
    let rendered = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < ids.length) {
          const id = ids[next++];
          for (let attempt = 0; ; attempt++) {
            try {
              await client.renderDocumentPdf({ tenant, document_type: DocumentType.DOCUMENT_TYPE_INVOICE, document_id: id, if_none_match: '' }, { timeoutMs: 60_000 });
              rendered++;
              break;
            } catch (err) {
              // The pool may still be launching Chromium (503 renderer_unavailable): wait and retry.
              if (attempt >= 30) throw err;
              await sleep(1000);
            }
          }
        }
      }),
    );
    await sleep(1000);
    sample();
    clearInterval(sampler);
    log(`memory: rendering service ${peak.mb.toFixed(0)} MB with Chromium (${peak.chromiumMb.toFixed(0)} MB; ${peak.processes} processes), ${rendered} renders`);
    return { ...peak, renders: rendered };
  } finally {
    client.close();
    proc.child.kill('SIGTERM');
  }
}

main().catch((err) => {
  process.stderr.write(`PDF bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
});
