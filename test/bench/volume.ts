// `npm run bench:volume`: the embedded system on a seeded history of a million contacts (issue #18,
// "A million rows"). Separate from `npm run bench` because seeding takes minutes (8.5 on the 2-core
// machine, loaded) and the data 2.4 GB; a seeded DATA_DIR is reused by later runs.
// `-- --mode distributed --scale 0.02`: the distributed topology on the environment's engines
// (engines.env), seeded afresh at a scale FerretDB seeds in minutes (docs/decisions.md).
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
// Settings (arguments): --mode embedded|distributed, --data-dir DIR (default .bench/volume-data: seeded when it holds no workspace),
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

const { values } = parseArgs({
  options: { mode: { type: 'string', default: 'embedded' }, 'data-dir': { type: 'string' }, scale: { type: 'string', default: '1' }, repeat: { type: 'string', default: '30' } },
});
const mode = values.mode as 'embedded' | 'distributed';
const dataDir = path.resolve(values['data-dir'] ?? path.join(root, '.bench/volume-data'));
const scale = Number(values.scale);
const repeat = Number(values.repeat);
/** The engines of the environment must not turn the embedded process into a client of them. */
const ENGINE_VARS = ['MONGO_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'MINIO_ENDPOINT'];
const embeddedEnv = (extra: Record<string, string>) => ({ ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !ENGINE_VARS.includes(k))), ...extra });

/** The seeding command's arguments for PLAN × scale. */
function planArgs(): string[] {
  const n = (x: number) => String(Math.max(1, Math.round(x * scale)));
  return ['--workspaces', n(PLAN.workspaces), '--contacts', n(PLAN.contacts), '--invoices', n(PLAN.invoices), '--expenses', n(PLAN.expenses), '--largest-share', String(PLAN.largestShare)];
}

function seedIfEmpty(): { largest: number; seeded: boolean; seedSeconds?: number; rows?: number } {
  const summaryFile = path.join(dataDir, 'seed-summary.json');
  if (existsSync(summaryFile)) return { largest: JSON.parse(readFileSync(summaryFile, 'utf8')).largest_workspace_id, seeded: false };
  mkdirSync(dataDir, { recursive: true });
  const started = performance.now();
  const out = execFileSync(process.execPath, [dist('deploy/seed/main.js'), '--mode', 'embedded', '--data-dir', dataDir, ...planArgs()], {
    env: embeddedEnv({}), stdio: ['ignore', 'pipe', 'inherit'],
  }).toString();
  writeFileSync(summaryFile, out);
  const summary = JSON.parse(out);
  const rows = Object.values(summary.rows as Record<string, number>).reduce((a, b) => a + b);
  return { largest: summary.largest_workspace_id, seeded: true, seedSeconds: (performance.now() - started) / 1000, rows };
}

const statusMb = (pid: number, field: 'VmRSS' | 'VmHWM') => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Answers other than 200, by status: reported, not fatal (a GET is retried; on a loaded shared FerretDB lists time out). */
const failures: Record<string, number> = {};

async function timed(url: string, authorization: string): Promise<{ ms: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    const res = await fetch(url, { headers: { authorization } });
    const body = await res.json();
    const ms = performance.now() - started;
    if (res.status === 200) return { ms, body };
    failures[res.status] = (failures[res.status] ?? 0) + 1;
    if (attempt === 3) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  }
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

/** The URL of page `page` (1-based) of a list, walking next_cursor from the first; the last page if there are fewer. */
async function pageUrl(list: string, page: number, authorization: string): Promise<{ url: string; page: number }> {
  let url = `${list}?limit=25`;
  for (let p = 1; p < page; p++) {
    const { body } = await timed(url, authorization);
    if (!body.next_cursor) return { url, page: p };
    url = `${list}?limit=25&cursor=${encodeURIComponent(body.next_cursor)}`;
  }
  return { url, page };
}

/** A running system on seeded data: where to call, as whom, and what its start cost (embedded). */
interface Target {
  base: string;
  authorization: string;
  seeding: { seconds: number; rows: number } | 'reused';
  process?: { startupMs: number; rssAtStartMb: number; rssMb: () => number; peakRssMb: () => number };
  stop(): Promise<void>;
}

async function embedded(): Promise<Target> {
  const seed = seedIfEmpty();
  const started = performance.now();
  // Started as `npm start` starts it: with the heap bounds of deploy/embedded/node-flags.ts.
  const child: ChildProcess = spawn(process.execPath, [...embeddedNodeFlags(), dist('deploy/embedded/main.js')], {
    env: embeddedEnv({ DATA_DIR: dataDir, PORT: '0', NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_GENERAL: '1000000000' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc = await readyProcess(child, 'embedded system');
  const startupMs = performance.now() - started;
  const cli = (...args: string[]) => JSON.parse(execFileSync(process.execPath, [dist('deploy/cli/main.js'), ...args], { env: embeddedEnv({ DATA_DIR: dataDir }) }).toString());
  const { token } = cli('token', 'create', '--kind', 'live', '--workspace', String(seed.largest), '--scopes', 'all');
  return {
    base: `http://127.0.0.1:${proc.port}/api/v1/accounts/${seed.largest}`,
    authorization: `Bearer ${token}`,
    seeding: seed.seeded ? { seconds: seed.seedSeconds!, rows: seed.rows! } : 'reused',
    process: { startupMs, rssAtStartMb: statusMb(proc.pid, 'VmRSS'), rssMb: () => statusMb(proc.pid, 'VmRSS'), peakRssMb: () => statusMb(proc.pid, 'VmHWM') },
    stop: async () => {
      if (process.env.VOLUME_SHOW_STDERR) process.stdout.write(`\nthe embedded process's stderr:\n${proc.stderr().slice(-4000)}\n`);
      child.kill('SIGTERM');
    },
  };
}

/** The distributed topology on the engines of the environment (MONGO_URL, KAFKA_BROKERS, …), seeded afresh in a database of its own. */
async function distributed(): Promise<Target> {
  const { startSystem } = await import('../support/system');
  let seeding: { seconds: number; rows: number } | undefined;
  let largest = 0;
  const system = await startSystem({
    mode: 'distributed',
    env: { NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_GENERAL: '1000000000' },
    beforeStart: async (where) => {
      const started = performance.now();
      const out = execFileSync(process.execPath, [dist('deploy/seed/main.js'), '--mode', 'distributed', ...planArgs()], {
        env: { ...process.env, MONGO_URL: where.MONGO_URL }, stdio: ['ignore', 'pipe', 'inherit'],
      }).toString();
      const summary = JSON.parse(out);
      largest = summary.largest_workspace_id;
      seeding = { seconds: (performance.now() - started) / 1000, rows: Object.values(summary.rows as Record<string, number>).reduce((a, b) => a + b) };
    },
  });
  const { token } = await system.cli('token', 'create', '--kind', 'live', '--workspace', String(largest), '--scopes', 'all');
  return { base: `${system.baseUrl}/api/v1/accounts/${largest}`, authorization: `Bearer ${token}`, seeding: seeding!, stop: () => system.stop() };
}

async function main(): Promise<void> {
  const target = mode === 'distributed' ? await distributed() : await embedded();
  try {
    const { base, authorization } = target;
    const pages: Record<string, { page: number; page1: number; deep: number; ratio: number }> = {};
    for (const resource of ['contacts', 'invoices']) {
      const { url, page } = await pageUrl(`${base}/${resource}`, 1000, authorization);
      // Taken in turns, so a drift of the machine's speed weighs on both alike.
      const [page1, deep] = await p50s([`${base}/${resource}?limit=25`, url], authorization);
      pages[resource] = { page, page1, deep, ratio: deep / page1 };
    }

    // Needles of every selectivity: a legal form (half the rows), a city, a surname, a surname with its
    // trade (rare), a run of letters that names nothing (no row).
    const contactNeedles = ['s.r.o.', 'příbram', 'dvořák', 'novák stavby', 'müller', 'edinburgh', 'zzqx'];
    const contacts: Record<string, number> = {};
    for (const q of contactNeedles) contacts[q] = (await p50s([`${base}/contacts?limit=25&q=${encodeURIComponent(q)}`], authorization))[0];
    const expenseNeedles = ['fuel', 'kovac', 'schmidt logistik', 'conference', '2025-0', 'zzqx'];
    const expenses: Record<string, number> = {};
    for (const q of expenseNeedles) expenses[q] = (await p50s([`${base}/expenses?limit=25&search=${encodeURIComponent(q)}`], authorization))[0];

    const p = target.process;
    const report = {
      mode,
      machine: `${execFileSync('nproc').toString().trim()} cores, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
      plan: { ...PLAN, scale },
      seeding: target.seeding === 'reused' ? 'reused' : { seconds: Math.round(target.seeding.seconds), rowsPerSecond: Math.round(target.seeding.rows / target.seeding.seconds) },
      process: p && { startupMs: Math.round(p.startupMs), rssAtStartMb: Math.round(p.rssAtStartMb), rssAfterMb: Math.round(p.rssMb()), peakRssMb: Math.round(p.peakRssMb()), targetMb: TARGETS.rssMb },
      pages: { ...pages, targetRatio: TARGETS.pageRatio },
      contactSearchP50Ms: { overall: median(Object.values(contacts)), byNeedle: contacts, targetMs: TARGETS.searchP50Ms },
      expenseSearchP50Ms: { overall: median(Object.values(expenses)), byNeedle: expenses, targetMs: TARGETS.searchP50Ms },
      failedRequests: failures,
    };
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const lines = [
      `| figure (${mode}) | measured | target | |`,
      `|---|---|---|---|`,
      ...Object.entries(pages).map(([r, x]) => `| ${r}: page ${x.page} vs page 1 (p50 ${x.deep.toFixed(1)} / ${x.page1.toFixed(1)} ms) | ${x.ratio.toFixed(2)}× | ≤ ${TARGETS.pageRatio}× | ${verdict(x.ratio <= TARGETS.pageRatio)} |`),
      `| contacts \`q\` p50 (median of needles) | ${report.contactSearchP50Ms.overall.toFixed(1)} ms | ≤ ${TARGETS.searchP50Ms} ms | ${verdict(report.contactSearchP50Ms.overall <= TARGETS.searchP50Ms)} |`,
      `| expenses \`search\` p50 (median of needles) | ${report.expenseSearchP50Ms.overall.toFixed(1)} ms | ≤ ${TARGETS.searchP50Ms} ms | ${verdict(report.expenseSearchP50Ms.overall <= TARGETS.searchP50Ms)} |`,
      ...(report.process
        ? [
            `| start-up (spawn → ready) | ${report.process.startupMs} ms | | |`,
            `| RSS at start / after the run / peak | ${report.process.rssAtStartMb} / ${report.process.rssAfterMb} / ${report.process.peakRssMb} MB | ≤ ${TARGETS.rssMb} MB | ${verdict(report.process.peakRssMb <= TARGETS.rssMb)} |`,
          ]
        : []),
      ...(Object.keys(failures).length ? [`| requests answered other than 200 (retried) | ${JSON.stringify(failures)} | none | |`] : []),
      ...(typeof report.seeding === 'string' ? [] : [`| seeding | ${report.seeding.seconds} s, ${report.seeding.rowsPerSecond} rows/s | | |`]),
    ];
    process.stdout.write(`${lines.join('\n')}\n\n${JSON.stringify(report, null, 2)}\n`);
    mkdirSync(path.join(root, '.bench'), { recursive: true });
    writeFileSync(path.join(root, `.bench/volume-${mode}.json`), JSON.stringify(report, null, 2));
  } finally {
    await target.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
