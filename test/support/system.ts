// Starts the whole system as child processes, the way users run it: embedded (one process, data in a
// temporary DATA_DIR) or distributed (one process per service plus the gateway, on the real engines).
// Cluster mode (docs/cluster.md) is the distributed mode with replicas: several processes of a service
// reached through one `ipv4:a:p1,a:p2` target (grpc-js round_robin), several gateways behind a
// round-robin HTTP proxy whose URL is the system's baseUrl.
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { embeddedNodeFlags } from '../../deploy/embedded/node-flags';
import { serviceModules } from '../../deploy/modules';
import { isolatedMongoUrl, onlyCredentialsOf, realEngineEnv, withoutEngines } from './real-engines';
import { RoundRobinProxy, startRoundRobinProxy } from './round-robin-proxy';

// The repository root, whether this runs from test/support (jest) or dist/test/support (the cluster launcher).
const above = path.resolve(__dirname, '../..');
const root = path.basename(above) === 'dist' ? path.dirname(above) : above;
export const dist = (file: string) => path.join(root, 'dist', file);

export type Mode = 'embedded' | 'distributed';

export interface System {
  mode: Mode;
  /** DATA_DIR of the system's processes (the mail outbox is DATA_DIR/outbox). */
  dataDir: string;
  /** Where clients call: the proxy in front of the gateways when there is one, else the first gateway. */
  baseUrl: string;
  /** One URL per gateway process (embedded: the one process), bypassing the proxy. */
  baseUrls: string[];
  /** The round-robin proxy in front of the gateways (cluster mode), if any. */
  proxy?: RoundRobinProxy;
  /** Environment under which the admin CLI finds this system. */
  cliEnv: Record<string, string>;
  /** Runs the admin CLI; resolves with its JSON output, rejects with its stderr on failure. */
  cli(...args: string[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Runs the CLI and returns exit code and output, for tests of its failures. */
  cliRaw(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  stop(): Promise<void>;
  /** Stops and starts again on the same data (embedded: same DATA_DIR; distributed: same database). */
  restart(): Promise<void>;
  /** SIGKILLs gateway `index` (embedded: the whole process), as a crash would; restart() brings it back. */
  killGateway(index?: number): Promise<void>;
  /** gRPC addresses of the services' ports and of their admin ports, by service name. */
  grpcAddresses(): { services: Record<string, string>; admin: Record<string, string> };
  /** Distributed mode: SIGKILLs replica `replica` of service `name` (identity, contacts, …). */
  killService(name: string, replica?: number): Promise<void>;
  /** Distributed mode: sends `signal` (e.g. SIGSTOP, SIGCONT) to replica `replica` of service `name`. */
  signalService(name: string, signal: NodeJS.Signals, replica?: number): void;
  /** Distributed mode: the gRPC port of each replica of service `name`, in replica order. */
  replicaPorts(name: string): number[];
  /** SIGTERMs gateway `index` (embedded: the whole process); resolves with its exit code once it exited. */
  terminateGateway(index?: number): Promise<number | null>;
  /** With `metrics: true`: the /metrics URL of each process, by label (embedded, identity, …, gateway 0). */
  metricsUrls: Record<string, string>;
  /** Everything the running processes wrote to stdout so far (their JSON log lines). */
  output(): string;
  /** The running processes by label (embedded system; identity, contacts, …, gateway 0), for benches reading /proc. */
  processes(): Array<{ label: string; pid: number }>;
}

export interface StartOptions {
  mode?: Mode;
  env?: Record<string, string>;
  /** Distributed mode: gateway processes sharing the services and Redis (default 1). */
  gateways?: number;
  /**
   * Distributed mode under mTLS: GRPC_TLS_DIR of each process by certificate identity (identity,
   * contacts, documents, rendering, gateway, and admin for the CLI).
   */
  tlsDirs?: Record<string, string>;
  /** Serve /metrics from every process, each on a free port of its own (otherwise METRICS_PORT=0: off). */
  metrics?: boolean;
  /** Distributed mode: processes per service by name (default 1); names without a module are ignored. */
  replicas?: Record<string, number>;
  /** Distributed mode: a round-robin HTTP proxy in front of the gateways becomes the baseUrl. */
  proxy?: boolean;
  /** Distributed mode: each process sees only the credentials the chart gives its workload (onlyCredentialsOf). */
  leastPrivilege?: boolean;
  /**
   * A system of this file's own even without other options: for a file that restarts, kills or signals
   * its processes, reads their output, or counts something across the whole system. Without it and
   * without other options (but `mode`), a jest run hands out its shared system (shared-systems.ts).
   */
  private?: boolean;
  /**
   * Runs on the system's empty data before its first start, given where that data is (DATA_DIR, and
   * MONGO_URL in the distributed mode): e.g. the seeding command.
   */
  beforeStart?: (target: { DATA_DIR: string; MONGO_URL?: string }) => Promise<void>;
}

/** The systems a jest run shares: one per mode, and one in cluster mode (the api-cluster project). */
export type SharedKey = Mode | 'cluster';

/** What a test file's process learns of a shared system (it runs in jest's parent process). */
export interface SharedSystemInfo {
  mode: Mode;
  dataDir: string;
  baseUrl: string;
  baseUrls: string[];
  cliEnv: Record<string, string>;
  grpc: { services: Record<string, string>; admin: Record<string, string> };
  replicaPorts: Record<string, number[]>;
}

/** Services run with two replicas in cluster mode (those present in deploy/modules.ts). */
export const clusterReplicatedServices = ['documents', 'expenses'];

/**
 * The topology of cluster mode (API_CLUSTER=1, the `api-cluster` jest project): two gateways behind
 * the proxy, two replicas of documents and expenses. A test's own options win.
 */
export function clusterDefaults(options: StartOptions): StartOptions {
  return {
    mode: 'distributed',
    gateways: 2,
    proxy: true,
    ...options,
    replicas: { ...Object.fromEntries(clusterReplicatedServices.map((name) => [name, 2])), ...(options.replicas ?? {}) },
  };
}

/** A port free right now (the OS's choice), for a listener whose port must be given in advance. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface Proc {
  child: ChildProcess;
  label: string;
  port: number;
  /** The admin port a service process reported, if it has admin services. */
  adminPort?: number;
  output(): string;
  /** What it wrote to stderr so far (the embedded system's first-start notice). */
  errorOutput(): string;
}

/**
 * Every process a system started and that is still running. A system whose start outlived its hook's
 * timeout is never handed to the test, so nothing stops it: its processes must not outlive the test run
 * (they would hold the machine and keep jest from exiting), so they are killed when the test process
 * exits and do not keep it alive.
 */
const running = new Set<ChildProcess>();
const READY_TIMEOUT_MS = 180_000;
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts a service process and resolves when it prints its ready line (also for tests' own replicas). */
export function startProcess(script: string, env: Record<string, string>, label: string, base: NodeJS.ProcessEnv = process.env): Promise<Proc> {
  return new Promise((resolve, reject) => {
    // The embedded process runs as `npm start` runs it: under its V8 heap bounds (EMBEDDED_HEAP_MB).
    const flags = script === dist('deploy/embedded/main.js') ? embeddedNodeFlags({ ...base, ...env }) : [];
    const child = spawn(process.execPath, ['--require', dist('test/support/die-with-parent.js'), ...flags, script], {
      // Metrics off unless asked for: many systems share this machine, and 9464 only once.
      env: { ...base, NODE_ENV: 'test', LOG_LEVEL: 'error', METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    child.once('exit', () => running.delete(child));
    child.unref();
    (child.stdout as unknown as { unref(): void }).unref();
    (child.stderr as unknown as { unref(): void }).unref();
    let out = '';
    let err = '';
    // Bounded, with room for a loaded 2-core CI machine starting a dozen processes at once.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} did not become ready in ${READY_TIMEOUT_MS / 1000} s\n${out}\n${err}`));
    }, READY_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) {
        clearTimeout(timer);
        const ready = JSON.parse(line) as { port: number; admin_port?: number };
        resolve({ child, label, port: ready.port, adminPort: ready.admin_port, output: () => out, errorOutput: () => err });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}\n${out}\n${err}`));
    });
  });
}

/** The modules in waves: each after every module it calls (its needs.peers), in the modules' order within a wave. */
export function startWaves<M extends { name: string; needs: { peers: readonly string[] } }>(modules: readonly M[]): M[][] {
  const started = new Set<string>();
  const waves: M[][] = [];
  let left = [...modules];
  while (left.length) {
    const wave = left.filter((m) => m.needs.peers.every((peer) => started.has(peer) || !modules.some((other) => other.name === peer)));
    if (!wave.length) throw new Error(`services that call each other cannot start in waves: ${left.map((m) => m.name).join(', ')}`);
    wave.forEach((m) => started.add(m.name));
    waves.push(wave);
    left = left.filter((m) => !wave.includes(m));
  }
  return waves;
}

/** Starts processes at once; if one fails, stops the others it started and fails with the first error. */
async function startAll(starts: (() => Promise<Proc>)[]): Promise<Proc[]> {
  const results = await Promise.allSettled(starts.map((start) => start()));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (!failure) return started;
  await Promise.all(started.map(stopProcess));
  throw failure.reason;
}

const exited = (proc: Proc) => proc.child.exitCode !== null || proc.child.signalCode !== null;

function stopProcess(proc: Proc): Promise<void> {
  return new Promise((resolve) => {
    if (exited(proc)) return resolve();
    const kill = setTimeout(() => proc.child.kill('SIGKILL'), 10_000);
    proc.child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    proc.child.kill('SIGTERM');
  });
}

function runCli(env: Record<string, string>, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [dist('deploy/cli/main.js'), ...args], { env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Runs the CLI and parses its JSON output; rejects with its stderr on failure. */
async function cliJson(env: Record<string, string>, args: string[]): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const result = await runCli(env, args);
  if (result.code !== 0) throw new Error(`invoicing ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout);
}

export function currentMode(): Mode {
  return (process.env.API_MODE as Mode) ?? 'embedded';
}

/**
 * The run's shared system a file asking for `requested` gets, if any: only with no option but `mode`.
 * Only the embedded system is shared by default: a shared distributed (or cluster) system lives through
 * the whole run, and its background work on the one FerretDB (relays and lanes polling, pre-renders)
 * slowed other files' latency checks — abuse-extraction-sandbox (distributed) failed 2 of 2 full runs
 * with it. SHARED_SYSTEMS=all shares those too (docs/testing.md).
 */
export function sharedSystemFor(requested: StartOptions): SharedKey | undefined {
  if (Object.keys(requested).some((option) => option !== 'mode')) return undefined;
  const mode = requested.mode ?? currentMode();
  const key: SharedKey = process.env.API_CLUSTER === '1' && mode === 'distributed' ? 'cluster' : mode;
  return key === 'embedded' || process.env.SHARED_SYSTEMS === 'all' ? key : undefined;
}

export async function startSystem(requested: StartOptions = {}): Promise<System> {
  const inCluster = process.env.API_CLUSTER === '1' && (requested.mode ?? currentMode()) === 'distributed';
  const sharedUrl = process.env.SHARED_SYSTEMS_URL;
  const sharedKey = sharedSystemFor(requested);
  if (sharedUrl && sharedKey) return attachShared(sharedUrl, sharedKey);
  const options = inCluster ? clusterDefaults(requested) : requested;
  const mode = options.mode ?? currentMode();
  let proxy: RoundRobinProxy | undefined;
  // Every system keeps its edge keys apart on a shared Redis (credential ids repeat across databases).
  const extraEnv = { EDGE_REDIS_PREFIX: `inv_test_${randomBytes(6).toString('hex')}:`, ...(options.env ?? {}) };
  let procs: Proc[] = [];
  let gateways: Proc[] = [];
  let baseUrls: string[] = [];
  let cliEnv: Record<string, string> = {};
  const metricsUrls: Record<string, string> = {};
  /** METRICS_PORT of the process `label` (a port kept across restarts), when metrics are asked for. */
  const metricsEnv = async (label: string): Promise<Record<string, string>> => {
    if (!options.metrics) return {};
    metricsUrls[label] ??= `http://127.0.0.1:${await freePort()}/metrics`;
    return { METRICS_PORT: new URL(metricsUrls[label]).port };
  };
  let launch: () => Promise<void>;
  const services = new Map<string, Proc[]>();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'invoicing-test-'));
  let target: { DATA_DIR: string; MONGO_URL?: string } = { DATA_DIR: dataDir };

  if (mode === 'embedded') {
    cliEnv = { DATA_DIR: dataDir, IDENTITY_ADMIN_ADDR: '' };
    launch = async () => {
      // Embedded means embedded engines, even when this test run has real-engine URLs exported.
      const proc = await startProcess(dist('deploy/embedded/main.js'), { DATA_DIR: dataDir, PORT: '0', ...(await metricsEnv('embedded')), ...extraEnv }, 'embedded system', withoutEngines());
      procs = [proc];
      gateways = [proc];
      baseUrls = [`http://127.0.0.1:${proc.port}`];
    };
  } else {
    const engines = realEngineEnv();
    const shared = {
      ...engines,
      MONGO_URL: isolatedMongoUrl(engines.MONGO_URL, `inv_${randomBytes(6).toString('hex')}`),
      JWT_SECRET: randomBytes(32).toString('base64url'),
      CURSOR_SECRET: randomBytes(32).toString('base64url'),
      URL_SECRET: randomBytes(32).toString('base64url'),
      DATA_DIR: dataDir,
      // As the chart does: the gateways spool uploads in a directory of this system (tests count its files).
      UPLOAD_SPOOL_DIR: path.join(dataDir, 'spool'),
      // On the run's shared Kafka, topics and consumer groups of their own: systems never consume each
      // other's events. A suite that brings its own broker reads the plain topic names.
      ...(options.env?.KAFKA_BROKERS ? {} : { KAFKA_TOPIC_PREFIX: `inv_test_${randomBytes(6).toString('hex')}.` }),
      ...extraEnv,
    };
    target = { DATA_DIR: dataDir, MONGO_URL: shared.MONGO_URL };
    const tlsEnv = (identity: string): Record<string, string> => (options.tlsDirs ? { GRPC_TLS_DIR: options.tlsDirs[identity] } : {});
    launch = async () => {
      const addresses: Record<string, string> = {};
      const adminEnv: Record<string, string> = {};
      procs = [];
      services.clear();
      // In waves, as fast as the peers allow: a service starts once the services it calls are up (their
      // addresses are its *_ADDR), the services of a wave — and the replicas of a service, as a
      // Deployment's pods do — together. One after another took ~25 s of a loaded 2-core machine.
      const startService = async (module: (typeof serviceModules)[number]) => {
        const peers = Object.fromEntries(Object.entries(addresses).map(([n, a]) => [`${n.toUpperCase()}_ADDR`, a]));
        const replicas = await startAll(
          Array.from({ length: options.replicas?.[module.name] ?? 1 }, (_, r) => async () => {
            const label = r === 0 ? module.name : `${module.name} ${r}`;
            const env = { ...shared, ...peers, ...tlsEnv(module.name), SERVICE: module.name, GRPC_PORT: '0', ADMIN_GRPC_PORT: '0', ...(await metricsEnv(label)) };
            if (!options.leastPrivilege) return startProcess(dist('deploy/distributed/main.js'), env, label);
            const own = <E extends NodeJS.ProcessEnv>(e: E) => onlyCredentialsOf(module.name, module.needs, e);
            return startProcess(dist('deploy/distributed/main.js'), own(env), label, own(process.env));
          }),
        );
        procs.push(...replicas);
        services.set(module.name, replicas);
        // One target naming every replica: the callers' round_robin channel spreads calls over them.
        addresses[module.name] = replicas.length === 1 ? `127.0.0.1:${replicas[0].port}` : `ipv4:${replicas.map((p) => `127.0.0.1:${p.port}`).join(',')}`;
        // Admin calls (the CLI) go to the first replica: they are rare and any replica serves them.
        if (replicas[0].adminPort) adminEnv[`${module.name.toUpperCase()}_ADMIN_ADDR`] = `127.0.0.1:${replicas[0].adminPort}`;
      };
      for (const wave of startWaves(serviceModules)) {
        // Every service of the wave is started even when one fails, so none is left running unrecorded.
        const results = await Promise.allSettled(wave.map(startService));
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      }
      const addrEnv = Object.fromEntries(Object.entries(addresses).map(([n, a]) => [`${n.toUpperCase()}_ADDR`, a]));
      gateways = await startAll(
        Array.from({ length: options.gateways ?? 1 }, (_, i) => async () =>
          startProcess(
            dist('deploy/distributed/main.js'),
            ((env) => (options.leastPrivilege ? onlyCredentialsOf('gateway', undefined, env) : env))({ ...shared, ...addrEnv, ...tlsEnv('gateway'), SERVICE: 'gateway', PORT: '0', ...(await metricsEnv(`gateway ${i}`)) }),
            `gateway ${i}`,
            options.leastPrivilege ? onlyCredentialsOf('gateway', undefined, process.env) : process.env,
          ),
        ),
      );
      procs.push(...gateways);
      baseUrls = gateways.map((g) => `http://127.0.0.1:${g.port}`);
      cliEnv = { ...addrEnv, ...adminEnv, ...tlsEnv('admin') };
      if (options.proxy) {
        if (proxy) proxy.setUpstreams(gateways.map((g) => g.port));
        else proxy = await startRoundRobinProxy(gateways.map((g) => g.port));
      }
    };
  }
  await options.beforeStart?.(target);
  await launch();
  const replicaOf = (name: string, replica: number): Proc => {
    const proc = services.get(name)?.[replica];
    if (!proc) throw new Error(`no replica ${replica} of ${name} (killService and signalService are for the distributed mode)`);
    return proc;
  };

  const system: System = {
    mode,
    dataDir,
    get baseUrl() {
      return proxy?.url ?? baseUrls[0];
    },
    get proxy() {
      return proxy;
    },
    get baseUrls() {
      return baseUrls;
    },
    get cliEnv() {
      return cliEnv;
    },
    metricsUrls,
    output: () => procs.map((p) => p.output()).join(''),
    processes: () => procs.map((p) => ({ label: p.label, pid: p.child.pid! })),
    cliRaw: (...args) => runCli(cliEnv, args),
    cli: (...args) => cliJson(cliEnv, args),
    stop: async () => {
      for (const proc of [...procs].reverse()) await stopProcess(proc);
      await proxy?.close();
      proxy = undefined;
    },
    restart: async () => {
      for (const proc of [...procs].reverse()) await stopProcess(proc);
      await launch();
    },
    killGateway: async (index = 0) => {
      const proc = gateways[index];
      if (!proc || exited(proc)) return;
      await new Promise<void>((resolve) => {
        proc.child.once('exit', () => resolve());
        proc.child.kill('SIGKILL');
      });
    },
    grpcAddresses: () => {
      if (mode === 'embedded') {
        const runtime = JSON.parse(readFileSync(path.join(dataDir, 'runtime.json'), 'utf8'));
        return { services: runtime.services, admin: runtime.admin };
      }
      const byName = (port: (proc: Proc) => number | undefined) =>
        Object.fromEntries([...services].filter(([, [proc]]) => port(proc)).map(([name, [proc]]) => [name, `127.0.0.1:${port(proc)}`]));
      return { services: byName((proc) => proc.port), admin: byName((proc) => proc.adminPort) };
    },
    replicaPorts: (name) => (services.get(name) ?? []).map((proc) => proc.port),
    signalService: (name, signal, replica = 0) => {
      replicaOf(name, replica).child.kill(signal);
    },
    terminateGateway: (index = 0) => {
      const proc = gateways[index];
      if (!proc || exited(proc)) return Promise.resolve(proc?.child.exitCode ?? null);
      return new Promise((resolve) => {
        proc.child.once('exit', (code) => resolve(code));
        proc.child.kill('SIGTERM');
      });
    },
    killService: async (name, replica = 0) => {
      const proc = replicaOf(name, replica);
      if (exited(proc)) return;
      await new Promise<void>((resolve) => {
        proc.child.once('exit', () => resolve());
        proc.child.kill('SIGKILL');
      });
    },
  };
  return system;
}

/** GETs a URL of the coordinator in jest's parent; no timeout of its own (the hook's bounds the start). */
function getJson(url: string): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/**
 * A handle on the run's shared system of `key` (started by the first file that asks). Its stop() does
 * nothing: the run stops it at the end. What would disturb the other files using it fails loudly.
 */
async function attachShared(coordinator: string, key: SharedKey): Promise<System> {
  const { status, body } = await getJson(`${coordinator}/systems/${key}`);
  if (status !== 200) throw new Error(body.error ?? `shared ${key} system: ${status}`);
  const info = body as SharedSystemInfo;
  const notShared = (what: string) => () => {
    throw new Error(`${what}: this file uses the run's shared ${key} system; pass { private: true } to startSystem for a system of its own`);
  };
  return {
    mode: info.mode,
    dataDir: info.dataDir,
    baseUrl: info.baseUrl,
    baseUrls: info.baseUrls,
    cliEnv: info.cliEnv,
    metricsUrls: {},
    cliRaw: (...args) => runCli(info.cliEnv, args),
    cli: (...args) => cliJson(info.cliEnv, args),
    stop: async () => undefined,
    grpcAddresses: () => info.grpc,
    replicaPorts: (name) => info.replicaPorts[name] ?? [],
    output: notShared('output()'),
    processes: notShared('processes()'),
    restart: notShared('restart()'),
    killGateway: notShared('killGateway()'),
    killService: notShared('killService()'),
    signalService: notShared('signalService()'),
    terminateGateway: notShared('terminateGateway()'),
  };
}
