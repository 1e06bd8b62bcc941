// `npm run bench` (second part; alone: node dist/test/bench/pdf.js): PDFs.
//   - cached PDF download (GET …/invoices/<id>/pdf of an unchanged, stored PDF) and the 304 answer to
//     If-None-Match, each as a ratio against the naive chain (pdf-baseline.ts: express + one unary
//     gRPC call returning the same PDF as a constant), slices interleaved in the same run (targets
//     ≥ 0.5 and ≥ 0.8);
//   - whether the first download after issue is served from storage (pre-rendered on the event);
//   - warm render throughput of the Chromium pool (default size 2) in pages/s, with render p50/p99;
//   - resident memory of the embedded process with its Chromium (all services, one process).
// Method as in run.ts: loopback, servers pinned to core 0 and the load generator to core 1 when
// possible; each setup warmed; slices of BENCH_SLICE_MS in a shuffled order per cycle. Report:
// .bench/pdf-report.md and .json. Settings: BENCH_PDF_CYCLES (5), BENCH_SLICE_MS (1000),
// BENCH_PDF_CONNECTIONS (8), BENCH_RENDER_S (10), RENDER_POOL_SIZE (2), CHROMIUM_PATH.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { RenderDocumentPdfResponse } from '../../gen/invoicing/rendering/v1/rendering';
import { ChromiumPool } from '../../services/rendering/adapters/chromium-pool';
import { handlebarsTemplate } from '../../services/rendering/adapters/handlebars-template';
import { Pdfs } from '../../services/rendering/domain/pdfs';
import { renderInput } from '../../services/rendering/domain/render-input';
import { createLogger } from '../../services/shared/logger';
import { printable, workspace } from '../unit/rendering.fixtures';
import type { LoadConfig, LoadResult } from './load';

const root = path.resolve(__dirname, '../../..');
const dist = (file: string) => path.join(root, 'dist', file);
const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const CYCLES = env('BENCH_PDF_CYCLES', 5);
const SLICE_MS = env('BENCH_SLICE_MS', 1000);
const CONNECTIONS = env('BENCH_PDF_CONNECTIONS', 8);
const RENDER_S = env('BENCH_RENDER_S', 10);
const POOL_SIZE = env('RENDER_POOL_SIZE', 2);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
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
function spawnPinned(core: string, args: string[], extraEnv: Record<string, string> = {}): ChildProcess {
  const [cmd, argv] = pinning ? ['taskset', ['-c', core, process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(cmd, argv, { env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

interface Proc {
  child: ChildProcess;
  pid: number;
  port: number;
  stderr: () => string;
}

function startServer(label: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const child = spawnPinned('0', args, extraEnv);
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${label} did not start in 60 s\n${err.slice(-2000)}`)), 60_000);
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) {
        clearTimeout(timer);
        resolve({ child, pid: child.pid!, port: JSON.parse(line).port as number, stderr: () => err });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}\n${err.slice(-2000)}`));
    });
  });
}

function load(config: LoadConfig): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawnPinned('1', [dist('test/bench/load.js'), JSON.stringify(config)]);
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{"result"'));
      if (!line) return reject(new Error(`load generator failed (${code}): ${out.slice(-500)}`));
      resolve((JSON.parse(line) as { result: LoadResult }).result);
    });
  });
}

/** Memory of a process and all its descendants (Chromium's processes), in MB: the sum of their PSS
 * (proportional set size: shared pages split between the processes sharing them — summing RSS would
 * count Chromium's shared libraries once per process), RSS where PSS is unreadable. */
function treeRssMb(pid: number, { descendantsOnly = false } = {}): number {
  const kids = (p: number): number[] => {
    try {
      return readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const rss = (p: number) => {
    try {
      return Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;
    } catch {
      try {
        return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) / 1024;
      } catch {
        return 0;
      }
    }
  };
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...kids(all[i]));
  return (descendantsOnly ? all.slice(1) : all).reduce((sum, p) => sum + rss(p), 0);
}

const median = (values: number[]) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : NaN;
};
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
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
  const invoice = await sys.call('POST', '/invoices', {
    purchaser_id: purchaser.body.invoice_account_id,
    variable_symbol: '2026001',
    ...(bank.status === 201 ? { bank_account_id: bank.body.id } : {}),
    line_items: Array.from({ length: 8 }, (_, i) => ({ name: `Položka ${i + 1} — vývoj`, quantity: String(i + 1), unit_price: '1250.50', vat_rate: i % 2 ? '12' : '21' })),
  });
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
  log(`first download after issue: ${first.status}, ${firstMs.toFixed(0)} ms, pre-rendered ${fromStorage ? `in ${preRenderedMs.toFixed(0)} ms after the issue call` : 'no'}`);
  const etag = first.headers.get('etag')!;
  const pdfPath = `/api/v1/accounts/${sys.accountId}/invoices/${invoice.body.id}/pdf`;

  const captured = path.join(work, 'pdf.pb');
  writeFileSync(captured, RenderDocumentPdfResponse.encode({ pdf, etag, filename: `Faktura ${issued.body.number}.pdf`, not_modified: false, from_store: true }).finish());
  const naive = await startServer('naive-pdf', [dist('test/bench/pdf-baseline.js'), captured]);

  const workloads: Array<{ key: string; port: number; headers: Record<string, string> }> = [
    { key: 'naive PDF', port: naive.port, headers: { Authorization: sys.authorization } },
    { key: 'cached PDF', port: sys.proc.port, headers: { Authorization: sys.authorization } },
    { key: 'naive 304', port: naive.port, headers: { Authorization: sys.authorization, 'If-None-Match': etag } },
    { key: '304', port: sys.proc.port, headers: { Authorization: sys.authorization, 'If-None-Match': etag } },
  ];
  const run = (w: (typeof workloads)[number], warmupMs: number, durationMs: number) =>
    load({ port: w.port, method: 'GET', path: pdfPath, headers: w.headers, connections: CONNECTIONS, warmupMs, durationMs });
  for (const w of workloads) await run(w, 2000, 200);
  const slices: Array<{ cycle: number; key: string; result: LoadResult }> = [];
  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    const line: string[] = [];
    for (const w of shuffle(workloads)) {
      const result = await run(w, 300, SLICE_MS);
      slices.push({ cycle, key: w.key, result });
      const bad = Object.keys(result.statuses).filter((s) => s !== '200' && s !== '304');
      if (bad.length) notes.push(`cycle ${cycle}: ${w.key} answered ${JSON.stringify(result.statuses)}`);
      line.push(`${w.key} ${result.rps.toFixed(0)}`);
    }
    log(`cycle ${cycle}/${CYCLES} req/s: ${line.join(', ')}`);
  }
  const ratio = (key: string, baseline: string) =>
    median(
      slices
        .filter((s) => s.key === key)
        .map((s) => s.result.rps / (slices.find((b) => b.cycle === s.cycle && b.key === baseline)?.result.rps ?? NaN)),
    );
  const rowOf = (key: string) => {
    const mine = slices.filter((s) => s.key === key).map((s) => s.result);
    return { rps: median(mine.map((r) => r.rps)), p50Ms: median(mine.map((r) => r.p50Ms)), p99Ms: median(mine.map((r) => r.p99Ms)) };
  };
  const embeddedRssMb = treeRssMb(sys.proc.pid);
  const chromiumMb = treeRssMb(sys.proc.pid, { descendantsOnly: true });
  naive.child.kill('SIGTERM');
  sys.proc.child.kill('SIGTERM');
  await sleep(500);

  // Warm render throughput: the pool alone (default size), fed as fast as it renders.
  log(`warm render throughput: pool of ${POOL_SIZE}, ${RENDER_S} s`);
  const pool = new ChromiumPool({ executablePath: CHROMIUM, poolSize: POOL_SIZE, timeoutMs: 30_000, queueMax: 64, log: createLogger('bench') });
  await pool.warm();
  const template = handlebarsTemplate();
  const pdfs = new Pdfs({ source: { document: async () => printable(), workspace: async () => workspace(), logo: async () => null }, template, renderer: pool, store: { get: async () => null, put: async () => undefined } });
  const html = await pdfs.html(renderInput({ account_id: 1, livemode: true }, printable(), workspace(), template.version));
  // Warm-up: the first renders of a page are several times slower (Chromium's caches, V8's JIT).
  await Promise.all(Array.from({ length: POOL_SIZE }, async () => {
    for (let i = 0; i < 10; i++) await pool.render(html);
  }));
  const latencies: number[] = [];
  const renderEnd = performance.now() + RENDER_S * 1000;
  await Promise.all(
    Array.from({ length: POOL_SIZE * 2 }, async () => {
      while (performance.now() < renderEnd) {
        const t = performance.now();
        await pool.render(html);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const pagesPerS = latencies.length / RENDER_S;
  await pool.close();

  const report = {
    date: new Date().toISOString(),
    cpus: os.cpus().length,
    pinning,
    cycles: CYCLES,
    pdf_bytes: pdf.length,
    rows: Object.fromEntries(workloads.map((w) => [w.key, rowOf(w.key)])),
    ratios: { 'cached PDF × naive': ratio('cached PDF', 'naive PDF'), '304 × naive 304': ratio('304', 'naive 304') },
    first_download_after_issue: { served_from_storage: fromStorage, pre_rendered_ms: preRenderedMs, download_ms: firstMs },
    render: { pool_size: POOL_SIZE, pages_per_s: pagesPerS, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), renders: latencies.length },
    memory_mb: { embedded_process_with_chromium: embeddedRssMb, chromium: chromiumMb },
    notes,
  };
  const targets = [
    ['cached PDF download ≥ 0.5 × naive chain', report.ratios['cached PDF × naive'] >= 0.5, report.ratios['cached PDF × naive'].toFixed(2)],
    ['304 ≥ 0.8 × naive chain', report.ratios['304 × naive 304'] >= 0.8, report.ratios['304 × naive 304'].toFixed(2)],
    ['warm render ≥ 15 pages/s (pool 2)', pagesPerS >= 15, pagesPerS.toFixed(1)],
    ['first download after issue served from storage', fromStorage, fromStorage ? 'yes' : 'no'],
    // The rendering service alone is not separable in embedded mode: the whole process (every service,
    // the gateway) with Chromium is an upper bound of it.
    ['rendering service + Chromium memory ≤ 600 MB (upper bound: the whole embedded process, PSS)', embeddedRssMb <= 600, embeddedRssMb.toFixed(0)],
  ] as const;
  const md = [
    `# PDF benchmark (${report.date})`,
    '',
    `${report.cpus} CPUs, pinning ${pinning ? 'on' : 'off'}, ${CYCLES} interleaved cycles of ${SLICE_MS} ms slices, ${CONNECTIONS} connections, PDF ${pdf.length} bytes.`,
    '',
    '| target | value | met |',
    '|---|---|---|',
    ...targets.map(([what, met, value]) => `| ${what} | ${value} | ${met ? 'yes' : '**no**'} |`),
    '',
    '| workload | req/s | p50 ms | p99 ms |',
    '|---|---|---|---|',
    ...Object.entries(report.rows).map(([key, r]) => `| ${key} | ${r.rps.toFixed(0)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} |`),
    '',
    `Warm render: ${pagesPerS.toFixed(1)} pages/s with a pool of ${POOL_SIZE}; render p50 ${report.render.p50_ms.toFixed(0)} ms, p99 ${report.render.p99_ms.toFixed(0)} ms (${latencies.length} renders).`,
    `First download after issue: pre-rendered ${fromStorage ? `${preRenderedMs.toFixed(0)} ms after the issue call` : 'no'}, download ${firstMs.toFixed(0)} ms.`,
    `Memory (PSS): the embedded process (every service and the gateway) with Chromium ${embeddedRssMb.toFixed(0)} MB, of which Chromium's processes ${chromiumMb.toFixed(0)} MB.`,
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

main().catch((err) => {
  process.stderr.write(`PDF bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
});
