// `npm run bench:volume`: the embedded system on a seeded history of a million contacts (issue #18,
// "A million rows"). Separate from `npm run bench` because seeding takes minutes (about 6 on the 2-core
// machine, loaded) and the data takes 2–3 GB; a seeded DATA_DIR is reused by later runs.
//
// Reports, as figures with their targets (never asserted):
//   - list page 1 vs page 1000 of contacts and invoices (limit 25: page 1000 starts 24,975 rows deep),
//     p50 latency of a single client, and their ratio (target ≤ 1.5×);
//   - `q` contact search over the workspace's 1M contacts: p50 over needles of every selectivity (target
//     ≤ 50 ms), and `search` over its 200k expenses likewise;
//   - start-up time (spawn → ready line) and resident memory of the embedded process on that data
//     (target ≤ 250 MB RSS): the node process alone, as `npm start` runs it (its heap bounds, its
//     Playwright worker thread), without the Chromium processes it launches (docs/rendering.md sizes those).
//
// Settings (arguments): --data-dir DIR (default .bench/volume-data: seeded when it holds no workspace),
// --scale F (default 1: the plan below × F, for a quick run), --repeat N (default 30 requests per figure).
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { embeddedNodeFlags } from '../../deploy/embedded/node-flags';
import { readyProcess } from './ready';

const root = path.resolve(__dirname, '../../..');
const dist = (file: string) => path.join(root, 'dist', file);

/** The seeded plan: one workspace of ~1M contacts and ~200k invoices and expenses among 999 small ones. */
const PLAN = { workspaces: 1000, contacts: 1_100_000, invoices: 220_000, expenses: 220_000, largestShare: 0.91 };
const TARGETS = { pageRatio: 1.5, searchP50Ms: 50, rssMb: 250 };

const { values } = parseArgs({ options: { 'data-dir': { type: 'string' }, scale: { type: 'string', default: '1' }, repeat: { type: 'string', default: '30' } } });
const dataDir = path.resolve(values['data-dir'] ?? path.join(root, '.bench/volume-data'));
const scale = Number(values.scale);
const repeat = Number(values.repeat);
/** The engines of the environment must not turn the embedded process into a client of them. */
const ENGINE_VARS = ['MONGO_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'MINIO_ENDPOINT'];
const embeddedEnv = (extra: Record<string, string>) => ({ ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !ENGINE_VARS.includes(k))), ...extra });

function seedIfEmpty(): { largest: number; seeded: boolean; seedSeconds?: number } {
  const summaryFile = path.join(dataDir, 'seed-summary.json');
  if (existsSync(summaryFile)) return { largest: JSON.parse(readFileSync(summaryFile, 'utf8')).largest_workspace_id, seeded: false };
  mkdirSync(dataDir, { recursive: true });
  const n = (x: number) => String(Math.max(1, Math.round(x * scale)));
  const started = performance.now();
  const out = execFileSync(
    process.execPath,
    [dist('deploy/seed/main.js'), '--mode', 'embedded', '--data-dir', dataDir, '--workspaces', n(PLAN.workspaces), '--contacts', n(PLAN.contacts),
      '--invoices', n(PLAN.invoices), '--expenses', n(PLAN.expenses), '--largest-share', String(PLAN.largestShare)],
    { env: embeddedEnv({}), stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
  ).toString();
  writeFileSync(summaryFile, out);
  return { largest: JSON.parse(out).largest_workspace_id, seeded: true, seedSeconds: (performance.now() - started) / 1000 };
}

const statusMb = (pid: number, field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function timed(url: string, authorization: string): Promise<{ ms: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization } });
  const body = await res.json();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return { ms, body };
}

/** p50 of `repeat` requests of one URL (after two unmeasured ones). */
async function p50(url: string, authorization: string): Promise<number> {
  for (let i = 0; i < 2; i++) await timed(url, authorization);
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) times.push((await timed(url, authorization)).ms);
  return median(times);
}

/** p50 of each URL, `repeat` rounds of one request to each in turn (after two unmeasured rounds). */
async function p50s(urls: string[], authorization: string): Promise<number[]> {
  const times = urls.map(() => [] as number[]);
  for (let round = -2; round < repeat; round++) {
    for (const [i, url] of urls.entries()) {
      const { ms } = await timed(url, authorization);
      if (round >= 0) times[i].push(ms);
    }
  }
  return times.map(median);
}

/** The URL of page `page` (1-based) of a list, walking next_cursor from the first. */
async function pageUrl(list: string, page: number, authorization: string): Promise<string> {
  let url = `${list}?limit=25`;
  for (let p = 1; p < page; p++) {
    const { body } = await timed(url, authorization);
    if (!body.next_cursor) throw new Error(`${list} has fewer than ${page} pages`);
    url = `${list}?limit=25&cursor=${encodeURIComponent(body.next_cursor)}`;
  }
  return url;
}

async function main(): Promise<void> {
  const seed = seedIfEmpty();
  const started = performance.now();
  // Started as `npm start` starts it: with the heap bounds of deploy/embedded/node-flags.ts.
  const child: ChildProcess = spawn(process.execPath, [...embeddedNodeFlags(), dist('deploy/embedded/main.js')], {
    env: embeddedEnv({ DATA_DIR: dataDir, PORT: '0', NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_GENERAL: '1000000000' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const proc = await readyProcess(child, 'embedded system');
    const startupMs = performance.now() - started;
    const rssAtStartMb = statusMb(proc.pid, 'VmRSS');
    const cli = (...args: string[]) =>
      JSON.parse(execFileSync(process.execPath, [dist('deploy/cli/main.js'), ...args], { env: embeddedEnv({ DATA_DIR: dataDir }) }).toString());
    const { token } = cli('token', 'create', '--kind', 'live', '--workspace', String(seed.largest), '--scopes', 'all');
    const authorization = `Bearer ${token}`;
    const base = `http://127.0.0.1:${proc.port}/api/v1/accounts/${seed.largest}`;

    const pages: Record<string, { page1: number; page1000: number; ratio: number }> = {};
    for (const resource of ['contacts', 'invoices']) {
      const deep = await pageUrl(`${base}/${resource}`, 1000, authorization);
      // Taken in turns, so a drift of the machine's speed weighs on both alike.
      const [page1, page1000] = await p50s([`${base}/${resource}?limit=25`, deep], authorization);
      pages[resource] = { page1, page1000, ratio: page1000 / page1 };
    }

    // Needles of every selectivity: a legal form (half the rows), a city, a surname, a surname with its
    // trade (rare), a registration-like digit run that names nothing (no row).
    const contactNeedles = ['s.r.o.', 'příbram', 'dvořák', 'novák stavby', 'müller', 'edinburgh', 'zzqx'];
    const contacts: Record<string, number> = {};
    for (const q of contactNeedles) contacts[q] = await p50(`${base}/contacts?limit=25&q=${encodeURIComponent(q)}`, authorization);
    const expenseNeedles = ['fuel', 'kovac', 'schmidt logistik', 'conference', '2025-0', 'zzqx'];
    const expenses: Record<string, number> = {};
    for (const q of expenseNeedles) expenses[q] = await p50(`${base}/expenses?limit=25&search=${encodeURIComponent(q)}`, authorization);

    const report = {
      machine: `${execFileSync('nproc').toString().trim()} cores, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
      plan: { ...PLAN, scale },
      seeded: seed.seeded ? { seconds: Math.round(seed.seedSeconds!) } : 'reused',
      startup: { ms: Math.round(startupMs), rssAtStartMb: Math.round(rssAtStartMb), rssAfterMb: Math.round(statusMb(proc.pid, 'VmRSS')), peakRssMb: Math.round(statusMb(proc.pid, 'VmHWM')), targetMb: TARGETS.rssMb },
      pages: { ...pages, targetRatio: TARGETS.pageRatio },
      contactSearchP50Ms: { overall: median(Object.values(contacts)), byNeedle: contacts, targetMs: TARGETS.searchP50Ms },
      expenseSearchP50Ms: { overall: median(Object.values(expenses)), byNeedle: expenses, targetMs: TARGETS.searchP50Ms },
    };
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const lines = [
      `| figure | measured | target | |`,
      `|---|---|---|---|`,
      ...Object.entries(pages).map(([r, p]) => `| ${r}: page 1000 vs page 1 (p50 ${p.page1000.toFixed(1)} / ${p.page1.toFixed(1)} ms) | ${p.ratio.toFixed(2)}× | ≤ ${TARGETS.pageRatio}× | ${verdict(p.ratio <= TARGETS.pageRatio)} |`),
      `| contacts \`q\` p50 (median of needles) | ${report.contactSearchP50Ms.overall.toFixed(1)} ms | ≤ ${TARGETS.searchP50Ms} ms | ${verdict(report.contactSearchP50Ms.overall <= TARGETS.searchP50Ms)} |`,
      `| expenses \`search\` p50 (median of needles) | ${report.expenseSearchP50Ms.overall.toFixed(1)} ms | ≤ ${TARGETS.searchP50Ms} ms | ${verdict(report.expenseSearchP50Ms.overall <= TARGETS.searchP50Ms)} |`,
      `| start-up (spawn → ready) | ${report.startup.ms} ms | | |`,
      `| RSS at start / after the run / peak | ${report.startup.rssAtStartMb} / ${report.startup.rssAfterMb} / ${report.startup.peakRssMb} MB | ≤ ${TARGETS.rssMb} MB | ${verdict(report.startup.peakRssMb <= TARGETS.rssMb)} |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n\n${JSON.stringify(report, null, 2)}\n`);
    if (process.env.VOLUME_SHOW_STDERR) process.stdout.write(`\nthe embedded process's stderr:\n${proc.stderr().slice(-4000)}\n`);
    mkdirSync(path.join(root, '.bench'), { recursive: true });
    writeFileSync(path.join(root, '.bench/volume.json'), JSON.stringify(report, null, 2));
  } finally {
    child.kill('SIGTERM');
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
