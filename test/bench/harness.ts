// What the load benches share (run.ts: embedded; distributed.ts: the distributed topology): pinning
// (servers on core 0, the load generator on core 1, see /work/shared/benchmarking.md), the processes
// they started and stop by PID, one measured slice of load with the CPU counters of the servers read
// from /proc around it, and the statistics of the reports.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ContactsServiceService, GetContactResponse } from '../../gen/invoicing/contacts/v1/contacts';
import type { LoadConfig, LoadResult } from './load';
import { cpuTicks, SystemTicks, systemTicks } from './proc-stats';

const root = path.resolve(__dirname, '../../..');
export const dist = (file: string) => path.join(root, 'dist', file);
export const benchRoot = root;
export const envNumber = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);

export const pinning = (() => {
  if (os.cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['-c', '0', 'true']);
    return true;
  } catch {
    return false;
  }
})();
export const SERVER_CORE = '0';
export const LOAD_CORE = '1';

/** Every process the bench started and that still runs: stopped by PID if the bench fails or is interrupted. */
const children = new Set<ChildProcess>();
const interruptCleanups: Array<() => void> = [];

export function spawnPinned(core: string, command: string, args: string[], extraEnv: Record<string, string> = {}): ChildProcess {
  const [cmd, argv] = pinning ? ['taskset', ['-c', core, command, ...args]] : [command, args];
  const child = spawn(cmd, argv, { env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function killChildren(): void {
  for (const child of children) child.kill('SIGKILL');
}

/** Runs `cleanup` (synchronously) when the bench is interrupted, after its children are killed. */
export function onInterrupt(cleanup: () => void): void {
  interruptCleanups.push(cleanup);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killChildren();
    for (const cleanup of interruptCleanups) cleanup();
    process.exit(130);
  });
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });

export function logger(began: number, tag = 'bench'): (line: string) => void {
  return (line) => process.stderr.write(`[${tag} ${((Date.now() - began) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
}

// ---------------------------------------------------------------------------------------------
// one measured slice

export interface Measurement {
  load: LoadResult;
  /** Server-side CPU (all server processes, Redis included) per request, in µs. */
  serverCpuUsPerRequest: number;
  /** CPU ticks (10 ms) each server process used while measuring, in the order of `serverPids`. */
  ticksByServer: number[];
  loadgenCpuPct: number;
  stealPct: number;
  otherCpuPct: number;
}

/**
 * Runs the load generator (its own process, pinned to the load core) with `config` and reads the CPU
 * counters of the servers at its measure-start and measure-end lines. A server may be a group of
 * processes (a process and its children): its ticks are summed.
 */
export function measure(config: LoadConfig, serverPids: Array<number | number[] | (() => number[])>): Promise<Measurement> {
  const groups = serverPids.map((p) => (typeof p === 'function' ? p : () => (Array.isArray(p) ? p : [p])));
  return new Promise((resolve, reject) => {
    const child = spawnPinned(LOAD_CORE, process.execPath, [dist('test/bench/load.js'), JSON.stringify(config)]);
    let out = '';
    let atStart: { servers: number[]; load: number; sys: SystemTicks } | undefined;
    let atEnd: typeof atStart;
    const sample = () => ({
      servers: groups.map((group) => group().reduce((sum, pid) => sum + (cpuTicks(pid) || 0), 0)),
      load: cpuTicks(child.pid!),
      sys: systemTicks(),
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), config.warmupMs + config.durationMs + 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!atStart && out.includes('measure-start\n')) atStart = sample();
      if (!atEnd && out.includes('measure-end\n')) atEnd = sample();
    });
    child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('{"result"'));
      if (!line || !atStart || !atEnd) return reject(new Error(`load generator failed (${code}): ${out.slice(-500)}`));
      const load = (JSON.parse(line) as { result: LoadResult }).result;
      const ticksByServer = atEnd.servers.map((ticks, i) => ticks - atStart!.servers[i]);
      const serverTicks = ticksByServer.reduce((a, b) => a + b, 0);
      const loadTicks = atEnd.load - atStart.load;
      const total = atEnd.sys.total - atStart.sys.total;
      const pct = (ticks: number) => (total > 0 ? (100 * ticks) / total : NaN);
      resolve({
        load,
        serverCpuUsPerRequest: load.requests ? (serverTicks * 10_000) / load.requests : NaN,
        ticksByServer,
        loadgenCpuPct: (100 * loadTicks) / (load.measuredMs / 10), // % of one core
        stealPct: pct(atEnd.sys.steal - atStart.sys.steal),
        otherCpuPct: pct(atEnd.sys.busy - atStart.sys.busy - serverTicks - loadTicks),
      });
    });
  });
}

/**
 * The GetContactResponse the measured GET's gRPC call receives, encoded, asked directly of the contacts
 * service at `address`: the naive chains answer it as their constant.
 */
export async function contactMessage(address: string, accountId: number, contactId: number): Promise<Buffer> {
  const Client = grpc.makeGenericClientConstructor(ContactsServiceService, 'invoicing.contacts.v1.ContactsService');
  const client = new Client(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    getContact(req: unknown, cb: (err: grpc.ServiceError | null, res: GetContactResponse) => void): void;
  };
  try {
    const reply = await new Promise<GetContactResponse>((resolve, reject) =>
      client.getContact({ tenant: { account_id: accountId, livemode: true }, id: contactId }, (err, res) => (err ? reject(err) : resolve(res))),
    );
    return Buffer.from(GetContactResponse.encode(reply).finish());
  } finally {
    client.close();
  }
}

// ---------------------------------------------------------------------------------------------
// statistics

export const median = (values: number[]) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export function quartile(values: number[], q: number): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

export function shuffle<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
