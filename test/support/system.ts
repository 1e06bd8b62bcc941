// Starts the whole system as child processes, the way users run it: embedded (one process, data in a
// temporary DATA_DIR) or distributed (one process per service plus the gateway, on the real engines).
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serviceModules } from '../../deploy/modules';
import { isolatedMongoUrl, realEngineEnv, withoutEngines } from './real-engines';

const root = path.resolve(__dirname, '../..');
const dist = (file: string) => path.join(root, 'dist', file);

export type Mode = 'embedded' | 'distributed';

export interface System {
  mode: Mode;
  /** DATA_DIR of the system's processes (the mail outbox is DATA_DIR/outbox). */
  dataDir: string;
  baseUrl: string;
  /** One URL per gateway process (embedded: the one process); baseUrl is the first. */
  baseUrls: string[];
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
  /** Distributed mode: SIGKILLs the process of service `name` (identity, contacts, …). */
  killService(name: string): Promise<void>;
  /** Distributed mode: sends `signal` (e.g. SIGSTOP, SIGCONT) to the process of service `name`. */
  signalService(name: string, signal: NodeJS.Signals): void;
  /** SIGTERMs gateway `index` (embedded: the whole process); resolves with its exit code once it exited. */
  terminateGateway(index?: number): Promise<number | null>;
  /** With `metrics: true`: the /metrics URL of each process, by label (embedded, identity, …, gateway 0). */
  metricsUrls: Record<string, string>;
  /** Everything the running processes wrote to stdout so far (their JSON log lines). */
  output(): string;
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

interface Proc {
  child: ChildProcess;
  port: number;
  /** The admin port a service process reported, if it has admin services. */
  adminPort?: number;
  output(): string;
}

function startProcess(script: string, env: Record<string, string>, label: string, base: NodeJS.ProcessEnv = process.env): Promise<Proc> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], {
      // Metrics off unless asked for: many systems share this machine, and 9464 only once.
      env: { ...base, NODE_ENV: 'test', LOG_LEVEL: 'error', METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} did not become ready in 60 s\n${out}\n${err}`));
    }, 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"ready"'));
      if (line) {
        clearTimeout(timer);
        const ready = JSON.parse(line) as { port: number; admin_port?: number };
        resolve({ child, port: ready.port, adminPort: ready.admin_port, output: () => out });
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

export function currentMode(): Mode {
  return (process.env.API_MODE as Mode) ?? 'embedded';
}

export async function startSystem(options: StartOptions = {}): Promise<System> {
  const mode = options.mode ?? currentMode();
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
  const services = new Map<string, Proc>();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'invoicing-test-'));

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
      // On the run's shared Kafka, topics and consumer groups of their own: systems never consume each
      // other's events. A suite that brings its own broker reads the plain topic names.
      ...(options.env?.KAFKA_BROKERS ? {} : { KAFKA_TOPIC_PREFIX: `inv_test_${randomBytes(6).toString('hex')}.` }),
      ...extraEnv,
    };
    const tlsEnv = (identity: string): Record<string, string> => (options.tlsDirs ? { GRPC_TLS_DIR: options.tlsDirs[identity] } : {});
    launch = async () => {
      const addresses: Record<string, string> = {};
      const adminEnv: Record<string, string> = {};
      procs = [];
      services.clear();
      for (const module of serviceModules) {
        const peers = Object.fromEntries(Object.entries(addresses).map(([n, a]) => [`${n.toUpperCase()}_ADDR`, a]));
        const proc = await startProcess(
          dist('deploy/distributed/main.js'),
          { ...shared, ...peers, ...tlsEnv(module.name), SERVICE: module.name, GRPC_PORT: '0', ADMIN_GRPC_PORT: '0', ...(await metricsEnv(module.name)) },
          module.name,
        );
        procs.push(proc);
        services.set(module.name, proc);
        addresses[module.name] = `127.0.0.1:${proc.port}`;
        if (proc.adminPort) adminEnv[`${module.name.toUpperCase()}_ADMIN_ADDR`] = `127.0.0.1:${proc.adminPort}`;
      }
      const addrEnv = Object.fromEntries(Object.entries(addresses).map(([n, a]) => [`${n.toUpperCase()}_ADDR`, a]));
      gateways = [];
      for (let i = 0; i < (options.gateways ?? 1); i++) {
        const gateway = await startProcess(
          dist('deploy/distributed/main.js'),
          { ...shared, ...addrEnv, ...tlsEnv('gateway'), SERVICE: 'gateway', PORT: '0', ...(await metricsEnv(`gateway ${i}`)) },
          `gateway ${i}`,
        );
        procs.push(gateway);
        gateways.push(gateway);
      }
      baseUrls = gateways.map((g) => `http://127.0.0.1:${g.port}`);
      cliEnv = { ...addrEnv, ...adminEnv, ...tlsEnv('admin') };
    };
  }
  await launch();

  const system: System = {
    mode,
    dataDir,
    get baseUrl() {
      return baseUrls[0];
    },
    get baseUrls() {
      return baseUrls;
    },
    get cliEnv() {
      return cliEnv;
    },
    metricsUrls,
    output: () => procs.map((p) => p.output()).join(''),
    cliRaw: (...args) => runCli(cliEnv, args),
    cli: async (...args) => {
      const result = await runCli(cliEnv, args);
      if (result.code !== 0) throw new Error(`invoicing ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
      return JSON.parse(result.stdout);
    },
    stop: async () => {
      for (const proc of [...procs].reverse()) await stopProcess(proc);
    },
    restart: async () => {
      await system.stop();
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
        Object.fromEntries([...services].filter(([, proc]) => port(proc)).map(([name, proc]) => [name, `127.0.0.1:${port(proc)}`]));
      return { services: byName((proc) => proc.port), admin: byName((proc) => proc.adminPort) };
    },
    signalService: (name, signal) => {
      const proc = services.get(name);
      if (!proc) throw new Error(`no ${name} process (signalService is for the distributed mode)`);
      proc.child.kill(signal);
    },
    terminateGateway: (index = 0) => {
      const proc = gateways[index];
      if (!proc || exited(proc)) return Promise.resolve(proc?.child.exitCode ?? null);
      return new Promise((resolve) => {
        proc.child.once('exit', (code) => resolve(code));
        proc.child.kill('SIGTERM');
      });
    },
    killService: async (name) => {
      const proc = services.get(name);
      if (!proc) throw new Error(`no ${name} process (killService is for the distributed mode)`);
      if (exited(proc)) return;
      await new Promise<void>((resolve) => {
        proc.child.once('exit', () => resolve());
        proc.child.kill('SIGKILL');
      });
    },
  };
  return system;
}
