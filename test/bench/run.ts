// `npm run bench`: requests/s and p50/p99 latency of
//   - an authenticated GET through gateway → gRPC → store (GET /accounts/<id>/contacts/<id>: rate
//     limit, auth from the principal cache, scope read:contacts, workspace gating from its cache,
//     contacts service, store), and
//   - a POST with a fresh Idempotency-Key each time (POST /accounts/<id>/contacts: workspace gating,
//     body validation, idempotency begin + complete, contacts service, store write),
// in embedded mode (edge state in SQLite/memory) and on real Redis (the same process with REDIS_URL),
// each as a ratio against baselines measured in the same round on the same machine: a bare node:http
// server answering the same JSON, and the naive chain (a bare express handler making one unary
// grpc-js call to a server returning a constant — the same contact message — and presenting it).
//
// Method (see /work/shared/benchmarking.md): loopback only; server processes (and Redis) pinned to
// core 0, the load generator to core 1 (taskset, when there are ≥ 2 cores); every setup started fresh
// in each round; warm-up discarded; per-request server CPU from /proc; steal and other processes' CPU
// recorded. On a shared 2-core VM the machine's speed drifts by 20–40 % over seconds, so a setup
// measured a few seconds after its baseline can look 30 % better or worse than it is. Hence the
// measurements are interleaved: in each round all setups run side by side (idle ones cost nothing),
// and the workloads take turns in short slices, in a new shuffled order every cycle. Every ratio is
// taken between slices of the same cycle (seconds apart), and the report gives medians over all
// slices of all rounds. Bounded: BENCH_BUDGET_S (default 300 s) of measuring, then the report is
// written from the rounds done. Report: .bench/report.md and .json.
//
// Slices during which other processes or the hypervisor took much CPU (see NOISY_*) are flagged;
// medians use the clean slices when there are any.
// The embedded setup also measures the same POST without a key, which separates the cost of the
// idempotency layer from the cost of the route itself.
//
// Settings (environment): BENCH_ROUNDS (3), BENCH_CYCLES (4 slices per workload and round),
// BENCH_SLICE_MS (1000 measured per slice, after BENCH_SLICE_WARMUP_MS 300), BENCH_WARMUP_MS (4000
// for a process's first workload; BENCH_REWARM_MS 1500 for its others), BENCH_CONNECTIONS (50),
// BENCH_BUDGET_S (300), REDIS_URL (use this Redis instead of starting one).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { LoadConfig, LoadResult } from './load';
import { Proc, readyProcess } from './ready';
import {
  benchRoot as root, contactMessage, dist, envNumber as env, fixed, freePort, killChildren, logger, measure, Measurement, median, onInterrupt, pinning,
  quartile, SERVER_CORE, shuffle, spawnPinned, stop,
} from './harness';

const ROUNDS = env('BENCH_ROUNDS', 3);
const CYCLES = env('BENCH_CYCLES', 4);
const SLICE_MS = env('BENCH_SLICE_MS', 1000);
const SLICE_WARMUP_MS = env('BENCH_SLICE_WARMUP_MS', 300);
/** Warm-up of a freshly started process's first workload (the JIT needs seconds); later ones need less. */
const WARMUP_MS = env('BENCH_WARMUP_MS', 4000);
const REWARM_MS = env('BENCH_REWARM_MS', 1500);
const CONNECTIONS = env('BENCH_CONNECTIONS', 50);
const BUDGET_MS = env('BENCH_BUDGET_S', 300) * 1000;
const NOISY_STEAL_PCT = 5;
const NOISY_OTHER_PCT = 15;
const began = Date.now();
const work = mkdtempSync(path.join(os.tmpdir(), 'invoicing-bench-'));

const log = logger(began);
onInterrupt(() => rmSync(work, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------
// processes

function startServer(label: string, args: string[], extraEnv: Record<string, string> = {}): Promise<Proc> {
  return readyProcess(spawnPinned(SERVER_CORE, process.execPath, args, extraEnv), label);
}

// ---------------------------------------------------------------------------------------------
// setups

type SetupName = 'bare' | 'naive' | 'embedded' | 'redis';
type WorkloadName = 'GET' | 'POST' | 'POST no key';

interface Workload {
  name: WorkloadName;
  config: Omit<LoadConfig, 'connections' | 'warmupMs' | 'durationMs'>;
}

interface Started {
  pids: number[];
  workloads: Workload[];
  /** Embedded only: where its data and its runtime.json (service addresses) are. */
  dataDir?: string;
  accountId?: number;
  contactId?: number;
  close(): Promise<void>;
}

interface Redis {
  url: string;
  pid?: number;
  close(): Promise<void>;
}

async function startRedis(): Promise<Redis | undefined> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, close: async () => undefined };
  try {
    execFileSync('redis-server', ['--version']);
  } catch {
    return undefined;
  }
  const port = await freePort();
  const dir = path.join(work, 'redis');
  mkdirSync(dir, { recursive: true });
  // The persistence the edge state needs in production (docs/edge.md): AOF, fsync every second.
  const child = spawnPinned(SERVER_CORE, 'redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec',
  ]);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pong = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
    });
    if (pong) break;
    if (Date.now() > deadline) throw new Error('redis-server did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url: `redis://127.0.0.1:${port}`, pid: child.pid, close: () => stop(child) };
}

async function startEmbedded(redis: Redis | undefined, label: string): Promise<Started> {
  const dataDir = mkdtempSync(path.join(work, 'data-'));
  const extraEnv: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: '0',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    // The limit check costs the same whatever the limit: a limit the load cannot reach.
    RATE_LIMIT_GENERAL: '1000000000',
    EDGE_REDIS_PREFIX: `bench_${randomBytes(4).toString('hex')}:`,
  };
  if (redis) extraEnv.REDIS_URL = redis.url;
  const proc = await startServer(label, [dist('deploy/embedded/main.js')], extraEnv);
  let token: string | undefined;
  let accountId: number | undefined;
  for (let i = 0; i < 100 && !(token && accountId); i++) {
    token = /Bearer (inv_pat_[A-Za-z0-9]+)/.exec(proc.stderr())?.[1];
    accountId = Number(/workspace (\d+)/.exec(proc.stderr())?.[1]) || undefined;
    if (!(token && accountId)) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!token || !accountId) throw new Error(`no demo token in the embedded system's output:\n${proc.stderr().slice(-1000)}`);
  const base = `http://127.0.0.1:${proc.port}/api/v1`;
  const authorization = `Bearer ${token}`;
  // One contact (and legal entity): the GET reads it, the POST attaches new contacts to its entity.
  const seeded = await fetch(`${base}/accounts/${accountId}/contacts`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', invoice_account: { name: 'Bench Customer s.r.o.' } }),
  });
  const contact = (await seeded.json()) as { id?: number; invoice_account_id?: number };
  if (seeded.status !== 201 || !contact.id || !contact.invoice_account_id) throw new Error(`seeding failed: ${seeded.status} ${JSON.stringify(contact)}`);
  return {
    pids: [proc.pid, ...(redis?.pid ? [redis.pid] : [])],
    dataDir,
    accountId,
    contactId: contact.id,
    workloads: [
      {
        name: 'GET',
        config: { port: proc.port, method: 'GET', path: `/api/v1/accounts/${accountId}/contacts/${contact.id}`, headers: { Authorization: authorization } },
      },
      {
        name: 'POST',
        config: {
          port: proc.port,
          method: 'POST',
          path: `/api/v1/accounts/${accountId}/contacts`,
          headers: { Authorization: authorization },
          body: JSON.stringify({ name: 'Bench contact', invoice_account_id: contact.invoice_account_id }),
          keyPrefix: `bench-${randomBytes(6).toString('hex')}-`,
        },
      },
      ...(redis
        ? []
        : [
            {
              name: 'POST no key' as const,
              config: {
                port: proc.port,
                method: 'POST' as const,
                path: `/api/v1/accounts/${accountId}/contacts`,
                headers: { Authorization: authorization },
                body: JSON.stringify({ name: 'Bench contact', invoice_account_id: contact.invoice_account_id }),
              },
            },
          ]),
    ],
    close: async () => {
      await stop(proc.child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function startBaseline(kind: 'bare' | 'naive', file: string, getPath: string): Promise<Started> {
  const proc = await startServer(kind, [dist('test/bench/baselines.js'), kind, file]);
  return {
    pids: [proc.pid],
    workloads: [{ name: 'GET', config: { port: proc.port, method: 'GET', path: getPath, headers: { Authorization: 'Bearer x' } } }],
    close: () => stop(proc.child),
  };
}

// ---------------------------------------------------------------------------------------------
// report

interface Slice extends Measurement {
  round: number;
  cycle: number;
  setup: SetupName;
  workload: WorkloadName;
  noisy: boolean;
}

interface Unloaded {
  round: number;
  key: string;
  load: LoadResult;
}

const keyOf = (slice: { setup: SetupName; workload: WorkloadName }) => `${slice.setup} ${slice.workload}`;

const LABEL: Record<string, string> = {
  'bare GET': 'bare node:http, same JSON',
  'naive GET': 'naive chain: express → 1 unary grpc-js call → constant',
  'embedded GET': 'authenticated GET, embedded (SQLite/memory edge state)',
  'redis GET': 'authenticated GET, Redis edge state',
  'embedded POST': 'POST + Idempotency-Key, embedded (SQLite edge state)',
  'embedded POST no key': 'the same POST without a key, embedded (the route alone)',
  'redis POST': 'POST + Idempotency-Key, Redis edge state',
};
const TARGETS: Array<{ key: string; min: number; what: string }> = [
  { key: 'embedded GET', min: 0.85, what: 'authenticated GET, embedded' },
  { key: 'redis GET', min: 0.85, what: 'authenticated GET, Redis' },
  { key: 'embedded POST', min: 0.5, what: 'idempotent POST, embedded' },
  { key: 'redis POST', min: 0.5, what: 'idempotent POST, Redis' },
];
/** The embedded mode against bare node:http (issue #18, the in-process transport), slices of the same cycle. */
const BARE_TARGETS: Array<{ key: string; min: number; what: string }> = [
  { key: 'embedded GET', min: 0.12, what: 'authenticated GET, embedded' },
  { key: 'embedded POST', min: 0.08, what: 'idempotent POST, embedded' },
];

function summarize(slices: Slice[], unloaded: Unloaded[], roundsDone: number, notes: string[]) {
  const keys = Object.keys(LABEL).filter((key) => slices.some((r) => keyOf(r) === key));
  const sameCycle = (r: Slice, key: string) => slices.find((b) => b.round === r.round && b.cycle === r.cycle && keyOf(b) === key);
  const rows = keys.map((key) => {
    const all = slices.filter((r) => keyOf(r) === key);
    const clean = all.filter((r) => !r.noisy);
    const mine = clean.length ? clean : all;
    /** Ratios between slices of one cycle (seconds apart): clean pairs when there are any. */
    const ratios = (baseline: string, ratio: (r: Slice, base: Slice) => number) => {
      const pairs = all.map((r) => ({ r, base: sameCycle(r, baseline) })).filter((p): p is { r: Slice; base: Slice } => !!p.base);
      const cleanPairs = pairs.filter((p) => !p.r.noisy && !p.base.noisy);
      return (cleanPairs.length ? cleanPairs : pairs).map((p) => ratio(p.r, p.base));
    };
    const byRps = (r: Slice, base: Slice) => r.load.rps / base.load.rps;
    const xNaiveSlices = ratios('naive GET', byRps);
    const quiet = unloaded.filter((u) => u.key === key);
    return {
      key,
      label: LABEL[key],
      slices: all.length,
      cleanSlices: clean.length,
      rps: median(mine.map((r) => r.load.rps)),
      xBare: median(ratios('bare GET', byRps)),
      xNaive: median(xNaiveSlices),
      xNaiveQuartiles: [quartile(xNaiveSlices, 0.25), quartile(xNaiveSlices, 0.75)] as [number, number],
      /** The same comparison by server CPU per request (naive ÷ this): the steadiest figure. */
      xNaiveCpu: median(ratios('naive GET', (r, base) => base.serverCpuUsPerRequest / r.serverCpuUsPerRequest)),
      p50Ms: median(mine.map((r) => r.load.p50Ms)),
      p99Ms: median(mine.map((r) => r.load.p99Ms)),
      unloadedP50Ms: median(quiet.map((u) => u.load.p50Ms)),
      unloadedP99Ms: median(quiet.map((u) => u.load.p99Ms)),
      serverCpuUsPerRequest: median(mine.map((r) => r.serverCpuUsPerRequest)),
      non2xx: all.reduce((sum, r) => sum + Object.entries(r.load.statuses).filter(([code]) => !code.startsWith('2')).reduce((a, [, n]) => a + n, 0), 0),
    };
  });
  const targets = TARGETS.filter((t) => rows.some((r) => r.key === t.key)).map((t) => {
    const row = rows.find((r) => r.key === t.key)!;
    return { ...t, ratio: row.xNaive, quartiles: row.xNaiveQuartiles, cpuRatio: row.xNaiveCpu, pass: row.xNaive >= t.min };
  });
  const bareTargets = BARE_TARGETS.filter((t) => rows.some((r) => r.key === t.key)).map((t) => {
    const row = rows.find((r) => r.key === t.key)!;
    return { ...t, ratio: row.xBare, pass: row.xBare >= t.min };
  });
  return {
    bareTargets,
    generated_at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, pinning },
    settings: {
      rounds_planned: ROUNDS,
      rounds_done: roundsDone,
      cycles: CYCLES,
      slice_ms: SLICE_MS,
      slice_warmup_ms: SLICE_WARMUP_MS,
      warmup_ms: WARMUP_MS,
      rewarm_ms: REWARM_MS,
      connections: CONNECTIONS,
    },
    rows,
    targets,
    slices,
    unloaded,
    notes,
  };
}

function markdown(report: ReturnType<typeof summarize>): string {
  const { settings } = report;
  const lines = [
    '# Benchmark: edge policies (gateway → gRPC → store)',
    '',
    `Generated ${report.generated_at} by \`npm run bench\` — ${report.machine.cpus} CPUs (${report.machine.model}), Node ${report.machine.node}, ` +
      `${report.machine.pinning ? 'servers pinned to core 0, load generator to core 1' : 'no CPU pinning (taskset or a second core missing)'}; ` +
      `${settings.rounds_done} of ${settings.rounds_planned} rounds (every setup started fresh in each), ${settings.connections} connections; ` +
      `in each round the workloads take turns in ${settings.cycles} cycles of ${settings.slice_ms / 1000} s slices (after ${settings.slice_warmup_ms / 1000} s of re-warming), ` +
      `in a new shuffled order every cycle, after a first warm-up of ${settings.warmup_ms / 1000} s per process; unloaded latency with 1 connection once per round.`,
    '',
    'Ratios are medians over slices, each taken against the baseline\'s slice of the same cycle (seconds apart), so the drift of a shared ' +
      'machine cancels out; the quartiles of the × naive ratio show the spread. "× naive, by CPU" compares server CPU time per request instead ' +
      '(naive ÷ setup), the steadiest figure. Medians use clean slices (low steal and other load) when there are any.',
    '',
    '| setup | req/s | × bare node:http | × naive chain (quartiles) | × naive, by CPU | p50 / p99 ms (loaded) | p50 / p99 ms (1 connection) | server CPU µs/req | clean slices | non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...report.rows.map(
      (r) =>
        `| ${r.label} | ${fixed(r.rps)} | ${fixed(r.xBare, 3)} | ${fixed(r.xNaive, 2)} (${fixed(r.xNaiveQuartiles[0], 2)}–${fixed(r.xNaiveQuartiles[1], 2)}) | ${fixed(r.xNaiveCpu, 2)} | ` +
        `${fixed(r.p50Ms, 1)} / ${fixed(r.p99Ms, 1)} | ${fixed(r.unloadedP50Ms, 2)} / ${fixed(r.unloadedP99Ms, 2)} | ${fixed(r.serverCpuUsPerRequest)} | ${r.cleanSlices}/${r.slices} | ${r.non2xx} |`,
    ),
    '',
    '## Targets',
    '',
    '| what | × naive chain | quartiles | × naive, by CPU | target | |',
    '|---|---:|---:|---:|---:|---|',
    ...report.targets.map(
      (t) => `| ${t.what} | ${fixed(t.ratio, 2)} | ${fixed(t.quartiles[0], 2)}–${fixed(t.quartiles[1], 2)} | ${fixed(t.cpuRatio, 2)} | ≥ ${t.min} | ${t.pass ? 'met' : '**not met**'} |`,
    ),
    '',
    '| what | × bare node:http | target | |',
    '|---|---:|---:|---|',
    ...report.bareTargets.map((t) => `| ${t.what} | ${fixed(t.ratio, 3)} | ≥ ${t.min} | ${t.pass ? 'met' : '**not met**'} |`),
    '',
    '## Slices',
    '',
    '| round | cycle | setup | req/s | p50 / p99 ms | server µs/req | load gen CPU % | steal % | other CPU % | |',
    '|---:|---:|---|---:|---:|---:|---:|---:|---:|---|',
    ...report.slices.map(
      (r) =>
        `| ${r.round} | ${r.cycle} | ${keyOf(r)} | ${fixed(r.load.rps)} | ${fixed(r.load.p50Ms, 1)} / ${fixed(r.load.p99Ms, 1)} | ` +
        `${fixed(r.serverCpuUsPerRequest)} | ${fixed(r.loadgenCpuPct)} | ${fixed(r.stealPct, 1)} | ${fixed(r.otherCpuPct, 1)} | ${r.noisy ? 'noisy' : ''} |`,
    ),
    '',
    ...(report.notes.length ? ['## Notes', '', ...report.notes.map((n) => `- ${n}`), ''] : []),
  ];
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

/** The GetContactResponse the measured GET's gRPC call receives, encoded (asked directly over gRPC). */
function captureContact(probe: Started): Promise<Buffer> {
  const runtime = JSON.parse(readFileSync(path.join(probe.dataDir!, 'runtime.json'), 'utf8')) as { services: Record<string, string> };
  return contactMessage(runtime.services.contacts, probe.accountId!, probe.contactId!);
}

async function main(): Promise<void> {
  const notes: string[] = [];
  if (!pinning) notes.push('CPU pinning unavailable: server and load generator share cores, ratios are less reliable.');
  log(`${os.cpus().length} CPUs, pinning ${pinning ? 'on' : 'off'}; ${ROUNDS} rounds × ${CYCLES} cycles of ${SLICE_MS} ms slices per workload, ${CONNECTIONS} connections`);

  const redis = await startRedis();
  if (!redis) notes.push('Redis rows skipped: no REDIS_URL and no redis-server on PATH.');
  else log(`Redis at ${redis.url}${process.env.REDIS_URL ? ' (from REDIS_URL, not pinned, its CPU not counted)' : ' (started here, pinned with the servers, AOF everysec)'}`);

  // Probe: what the measured GET answers (the bare server answers the same bytes) and the contact
  // message its gRPC call returns (the naive chain's constant).
  log('probe: starting the embedded system once to capture the GET response and its gRPC message');
  const probe = await startEmbedded(undefined, 'embedded (probe)');
  const get = probe.workloads[0].config;
  const sample = await fetch(`http://127.0.0.1:${get.port}${get.path}`, { headers: get.headers });
  const jsonFile = path.join(work, 'contact.json');
  writeFileSync(jsonFile, Buffer.from(await sample.arrayBuffer()));
  const messageFile = path.join(work, 'contact.pb');
  writeFileSync(messageFile, await captureContact(probe));
  await probe.close();
  if (sample.status !== 200) throw new Error(`probe GET answered ${sample.status}`);

  const setups: SetupName[] = ['bare', 'naive', 'embedded', ...(redis ? (['redis'] as const) : [])];
  const slices: Slice[] = [];
  const unloaded: Unloaded[] = [];
  let roundsDone = 0;
  const isNoisy = (m: Measurement) => m.stealPct > NOISY_STEAL_PCT || m.otherCpuPct > NOISY_OTHER_PCT;
  /** Each measurement spawns the load generator afresh (~0.3 s). Idempotent POSTs get keys never used before. */
  const run = (started: Started, workload: Workload, connections: number, warmupMs: number, durationMs: number) =>
    measure(
      {
        ...workload.config,
        ...(workload.config.keyPrefix !== undefined ? { keyPrefix: `${workload.config.keyPrefix}${randomBytes(4).toString('hex')}-` } : {}),
        connections,
        warmupMs,
        durationMs,
      },
      started.pids,
    );
  let perRoundMs = Infinity;
  for (let round = 1; round <= ROUNDS; round++) {
    const roundBegan = Date.now();
    if (round > 1 && Date.now() - began + perRoundMs > BUDGET_MS) {
      notes.push(`Stopped after ${round - 1} round(s) to stay within BENCH_BUDGET_S.`);
      log(`time budget reached: stopping after ${round - 1} round(s)`);
      break;
    }
    log(`round ${round}/${ROUNDS}: starting ${setups.join(', ')} side by side`);
    const running: Array<{ setup: SetupName; started: Started }> = [];
    try {
      for (const setup of shuffle(setups)) {
        const started =
          setup === 'bare' || setup === 'naive'
            ? await startBaseline(setup, setup === 'bare' ? jsonFile : messageFile, get.path)
            : await startEmbedded(setup === 'redis' ? redis : undefined, setup);
        running.push({ setup, started });
      }
      const turns = running.flatMap(({ setup, started }) => started.workloads.map((workload, index) => ({ setup, started, workload, index })));
      for (const turn of turns) {
        log(`  warming ${turn.setup} ${turn.workload.name}`);
        await run(turn.started, turn.workload, CONNECTIONS, turn.index === 0 ? WARMUP_MS : REWARM_MS, 200);
      }
      for (let cycle = 1; cycle <= CYCLES; cycle++) {
        const line: string[] = [];
        for (const turn of shuffle(turns)) {
          const loaded = await run(turn.started, turn.workload, CONNECTIONS, SLICE_WARMUP_MS, SLICE_MS);
          const noisy = isNoisy(loaded);
          slices.push({ round, cycle, setup: turn.setup, workload: turn.workload.name, ...loaded, noisy });
          const bad = Object.entries(loaded.load.statuses).filter(([code]) => !code.startsWith('2'));
          if (bad.length) notes.push(`round ${round} cycle ${cycle}: ${turn.setup} ${turn.workload.name} answered non-2xx ${JSON.stringify(Object.fromEntries(bad))}`);
          line.push(`${turn.setup} ${turn.workload.name} ${fixed(loaded.load.rps)}${noisy ? ' (noisy)' : ''}`);
        }
        log(`  cycle ${cycle}/${CYCLES} req/s: ${line.join(', ')}`);
      }
      for (const turn of turns) {
        const quiet = await run(turn.started, turn.workload, 1, 300, 700);
        unloaded.push({ round, key: `${turn.setup} ${turn.workload.name}`, load: quiet.load });
      }
    } finally {
      for (const { started } of running) await started.close();
    }
    roundsDone = round;
    perRoundMs = Date.now() - roundBegan;
    const cycleRatios = (key: string) =>
      slices
        .filter((r) => r.round === round && keyOf(r) === key)
        .map((r) => r.load.rps / (slices.find((b) => b.round === round && b.cycle === r.cycle && keyOf(b) === 'naive GET')?.load.rps ?? NaN));
    log(
      `round ${round} done in ${fixed(perRoundMs / 1000)} s; median × naive: ` +
        TARGETS.filter((t) => slices.some((r) => keyOf(r) === t.key))
          .map((t) => `${t.key} ${fixed(median(cycleRatios(t.key)), 2)}`)
          .join(', '),
    );
  }
  await redis?.close();
  if (slices.some((r) => r.noisy)) notes.push(`Slices flagged noisy had steal above ${NOISY_STEAL_PCT} % or other processes above ${NOISY_OTHER_PCT} % of the machine's CPU.`);
  if (slices.some((r) => r.setup === 'bare' && r.loadgenCpuPct > 90)) {
    notes.push('The load generator was near a full core during the bare node:http slices: that baseline is a lower bound (its × bare ratios are upper bounds).');
  }

  const report = summarize(slices, unloaded, roundsDone, notes);
  const outDir = path.join(root, '.bench');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'report.json'), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(path.join(outDir, 'report.md'), markdown(report));
  rmSync(work, { recursive: true, force: true });
  process.stdout.write(markdown(report).split('\n## Slices')[0] + '\n');
  log(`report: ${path.relative(process.cwd(), path.join(outDir, 'report.md'))} and report.json`);
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  killChildren();
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
});
