// The process adapter of the sandbox port: each job runs in a child Node process (child.ts) that the
// parent can kill with SIGKILL, whatever the job does. Why a process and not a worker thread: a worker's
// `resourceLimits` bound only its V8 heap, while the parsers we run allocate mostly outside it (libvips
// through sharp, tesseract's WASM memory, PDF.js's typed arrays); and a native crash in a worker takes the
// whole service down. A process's resident set counts all of it, and a crash ends only the sandbox.
//
// Limits that really end a job: a wall-clock timer on the parent's event loop (which the job cannot
// block), an RSS watchdog reading /proc/<pid>/status every `watchMs` (Linux), and V8's own heap cap
// (--max-old-space-size) as a second guard (and the only one where /proc is missing). The child runs
// niced, every thread of it (the serving loop wins the CPU), with oom_score_adj 1000 (the kernel's OOM killer takes it before
// the service), and with no secrets: its environment is a short allow-list.
//
// Children are kept warm between jobs (loading PDF.js and the OCR models costs seconds); one that was
// killed is replaced on the next job, and one whose RSS stays above `recycleFraction` of the limit after
// a job is retired so the next job starts with headroom.
import { ChildProcess, fork } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Sandbox, SandboxKill, SandboxKilled, SandboxLimits, SandboxRun, SandboxTaskError } from './port';

export interface ProcessSandboxOptions {
  /** Absolute path of the task module (without extension: .js in dist/, .ts under the test runner). */
  taskModule: string;
  /** Passed to the module's createTask once per child process. */
  init: unknown;
  limits: SandboxLimits;
  /** Jobs run at once (children kept). Default 1. */
  size?: number;
  /** How long a new child may take to load its task before it is killed. Default 60 s. */
  startMs?: number;
  /** RSS watchdog period. Default 100 ms. */
  watchMs?: number;
  /** A warm child above this fraction of the memory limit after a job is retired. Default 0.75. */
  recycleFraction?: number;
  /** Nice value of the children (0 = as the parent). Default 10. */
  nice?: number;
  /** Environment variables the children get (names); default PATH, TMPDIR, HOME, LANG, NODE_ENV. */
  env?: string[];
}

const DEFAULT_ENV = ['PATH', 'TMPDIR', 'TMP', 'TEMP', 'HOME', 'LANG', 'NODE_ENV'];
const HEAP_EXHAUSTED = /heap out of memory|Reached heap limit|Allocation failed/i;

type Reply = { type: 'ready' } | { type: 'init_failed'; error: WireError } | { type: 'result'; id: number; ok: true; value: unknown } | { type: 'result'; id: number; ok: false; error: WireError };
type WireError = { name: string; message: string; code?: string };

/** One child process and what the parent watches of it. */
class Child {
  readonly exited: Promise<void>;
  stderrTail = '';
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  /** Set when the parent killed it (so its exit is no crash). */
  killedFor: SandboxKill | null = null;

  constructor(readonly process: ChildProcess) {
    this.exited = new Promise((resolve) => process.once('close', (code: number | null, signal: NodeJS.Signals | null) => ((this.exit = { code, signal }), resolve())));
    process.stderr?.on('data', (chunk: Buffer) => (this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-4096)));
    process.on('error', () => undefined); // a failed spawn shows as its exit
  }

  get alive(): boolean {
    return this.exit === null;
  }

  kill(reason: SandboxKill): void {
    this.killedFor ??= reason;
    if (this.alive) this.process.kill('SIGKILL');
  }

  /** Resident set in bytes (Linux /proc), or null where it cannot be read. */
  async rss(): Promise<number | null> {
    const pid = this.process.pid;
    if (!pid || !this.alive) return null;
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
      return match ? Number(match[1]) * 1024 : null;
    } catch {
      return null;
    }
  }

  /** Why it died on its own: V8's heap cap is the memory limit too; anything else is a crash. */
  deathReason(): { kill: SandboxKill; message: string } {
    if (this.killedFor) return { kill: this.killedFor, message: `the sandbox was killed (${this.killedFor})` };
    if (HEAP_EXHAUSTED.test(this.stderrTail)) return { kill: 'memory_limit', message: 'the sandbox ran out of its memory limit (V8 heap)' };
    const how = this.exit?.signal ? `signal ${this.exit.signal}` : `exit code ${this.exit?.code}`;
    return { kill: 'crashed', message: `the sandbox process died (${how})` };
  }
}

/**
 * Lowers the priority of every thread of `pid`. On Linux a nice value belongs to a thread, not a process:
 * setpriority(pid) alone would leave V8's GC threads (started before it) competing at full priority.
 */
function renice(pid: number, nice: number): void {
  let threads = [pid];
  try {
    threads = readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    /* no /proc: the process's own value is all there is */
  }
  for (const tid of threads) {
    try {
      os.setPriority(tid, nice);
    } catch {
      /* not permitted, or the thread ended: it runs at the parent's priority */
    }
  }
}

export class ProcessSandbox<I, O> implements Sandbox<I, O> {
  private readonly idle: Child[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly live = new Set<Child>();
  private busy = 0;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: ProcessSandboxOptions) {}

  async run(input: I, run: SandboxRun = {}): Promise<O> {
    const limits = { ...this.options.limits, ...run.limits };
    await this.slot(run.signal);
    let child: Child | undefined;
    try {
      child = this.warm() ?? (await this.spawn(limits, run.signal));
      const answer = await this.job(child, input, limits, run.signal);
      await this.keepOrRetire(child, limits);
      return answer;
    } catch (error) {
      // A task's own error leaves its child usable; a killed child is gone.
      if (child && error instanceof SandboxTaskError) await this.keepOrRetire(child, limits);
      else if (child) this.retire(child);
      throw error;
    } finally {
      this.busy--;
      this.waiting.shift()?.();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.idle.length = 0;
    for (const child of this.live) child.kill('aborted');
    await Promise.all([...this.live].map((c) => c.exited));
    this.live.clear();
  }

  /** An idle child still alive (one may have died while idle, e.g. by the kernel's OOM killer). */
  private warm(): Child | undefined {
    for (let child = this.idle.pop(); child; child = this.idle.pop()) {
      if (child.alive) return child;
      this.live.delete(child);
    }
    return undefined;
  }

  private retire(child: Child): void {
    child.kill('aborted');
    this.live.delete(child);
  }

  /** Waits for a free slot (at most `size` jobs at once). */
  private async slot(signal?: AbortSignal): Promise<void> {
    if (this.closed) throw new SandboxKilled('aborted', 'the sandbox is closed');
    while (this.busy >= (this.options.size ?? 1)) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.waiting.splice(this.waiting.indexOf(wake), 1);
          reject(new SandboxKilled('aborted', 'the job was stopped while waiting for a sandbox'));
        };
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(wake);
      });
      if (this.closed) throw new SandboxKilled('aborted', 'the sandbox is closed');
    }
    this.busy++;
  }

  private async spawn(limits: SandboxLimits, signal?: AbortSignal): Promise<Child> {
    const source = __filename.endsWith('.ts');
    const entry = path.join(__dirname, `child${path.extname(__filename)}`);
    // Under the test runner the sources are TypeScript: the child compiles them as it requires them.
    const register = source ? ['-r', path.resolve(__dirname, '../../../scripts/ts-register.js')] : [];
    const env = Object.fromEntries((this.options.env ?? DEFAULT_ENV).filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]!]));
    const child = new Child(
      fork(entry, [this.options.taskModule], {
        execArgv: [...register, `--max-old-space-size=${Math.max(64, limits.memoryMb)}`],
        env,
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      }),
    );
    this.live.add(child);
    const pid = child.process.pid;
    if (pid) {
      renice(pid, this.options.nice ?? 10);
      await writeFile(`/proc/${pid}/oom_score_adj`, '1000').catch(() => undefined);
    }
    const ready = new Promise<void>((resolve, reject) => {
      child.process.on('message', function onReady(reply: Reply) {
        if (reply.type === 'ready') resolve();
        else if (reply.type === 'init_failed') reject(new SandboxTaskError(reply.error.name, reply.error.message, reply.error.code));
        else return;
        child.process.off('message', onReady);
      });
      void child.exited.then(() => {
        const death = child.deathReason();
        reject(new SandboxKilled(death.kill, `${death.message} while starting`));
      });
    });
    child.process.send({ type: 'init', init: this.options.init }, () => undefined); // a dead child shows as its exit
    const timer = setTimeout(() => child.kill('timeout'), this.options.startMs ?? 60_000);
    const onAbort = () => child.kill('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await ready;
      // Again, now that V8's platform threads (its GC among them) have started: threads started later
      // (OCR workers, libuv's pool) inherit the main thread's value.
      if (pid) renice(pid, this.options.nice ?? 10);
      return child;
    } catch (error) {
      child.kill('crashed');
      this.live.delete(child);
      throw error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** One job on `child`, under the wall-clock limit, the RSS watchdog and the caller's signal. */
  private job(child: Child, input: I, limits: SandboxLimits, signal?: AbortSignal): Promise<O> {
    const id = this.nextId++;
    const maxRss = limits.memoryMb * 1024 * 1024;
    return new Promise<O>((resolve, reject) => {
      let settled = false;
      const finish = (error: Error | null, value?: O) => {
        if (settled) return;
        settled = true;
        clearTimeout(wall);
        clearInterval(watch);
        signal?.removeEventListener('abort', onAbort);
        child.process.off('message', onMessage);
        child.process.off('close', onExit);
        if (error) reject(error);
        else resolve(value as O);
      };
      const killFor = (kill: SandboxKill, message: string) => {
        child.kill(kill);
        finish(new SandboxKilled(kill, message));
      };
      const onMessage = (reply: Reply) => {
        if (reply.type !== 'result' || reply.id !== id) return;
        if (reply.ok) finish(null, reply.value as O);
        else finish(new SandboxTaskError(reply.error.name, reply.error.message, reply.error.code));
      };
      const onAbort = () => killFor('aborted', 'the job was stopped by its caller');
      const wall = setTimeout(() => killFor('timeout', `the job ran past its wall-clock limit of ${limits.wallMs} ms`), limits.wallMs);
      const watch = setInterval(() => {
        void child.rss().then((rss) => {
          if (rss !== null && rss > maxRss) killFor('memory_limit', `the job's sandbox used ${Math.round(rss / 1048576)} MB, over its limit of ${limits.memoryMb} MB`);
        });
      }, this.options.watchMs ?? 100);
      const onExit = () => {
        const death = child.deathReason();
        finish(new SandboxKilled(death.kill, death.message));
      };
      child.process.on('message', onMessage);
      child.process.on('close', onExit);
      if (!child.alive) return onExit();
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      child.process.send({ type: 'run', id, input }, () => undefined);
    });
  }

  /** Back to the idle list, unless it died, the sandbox closed, or it holds too much memory to start another job. */
  private async keepOrRetire(child: Child, limits: SandboxLimits): Promise<void> {
    const rss = await child.rss();
    const heavy = rss !== null && rss > (this.options.recycleFraction ?? 0.75) * limits.memoryMb * 1024 * 1024;
    if (!child.alive || this.closed || heavy) return this.retire(child);
    this.idle.push(child);
  }
}
