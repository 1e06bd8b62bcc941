// The sandbox port: runs one job on untrusted input (a file to parse, a document to import, a webhook
// to call) somewhere that can be killed, under a wall-clock limit and a memory limit that end it for
// real — not a timer on the event loop that serves requests, which a busy parser never lets run.
// The adapter (process-sandbox.ts) runs jobs in child processes; docs/extraction.md "Sandbox".

export interface SandboxLimits {
  /** Wall-clock time a job may run; at the limit its sandbox is killed. */
  wallMs: number;
  /** Memory (resident set: V8 heap, buffers, native libraries, WASM) the sandbox may use; above it, killed. */
  memoryMb: number;
}

/** Why a sandbox was killed. `aborted`: the caller's signal asked for it. */
export type SandboxKill = 'timeout' | 'memory_limit' | 'crashed' | 'aborted';

/** The job did not answer: its sandbox was killed (by a limit, the caller, or it died on its own). */
export class SandboxKilled extends Error {
  constructor(
    readonly kill: SandboxKill,
    message: string,
  ) {
    super(message);
    this.name = 'SandboxKilled';
  }
}

/** The job answered with an error: its name, message and machine-readable code (e.g. a failure reason). */
export class SandboxTaskError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SandboxTaskError';
  }
}

export interface SandboxRun {
  /** Aborting kills the job's sandbox at once (SandboxKilled `aborted`). */
  signal?: AbortSignal;
  /** This job's limits, over the sandbox's defaults. */
  limits?: Partial<SandboxLimits>;
}

/**
 * Runs jobs of one kind (the task the adapter was made for). Rejects with SandboxKilled when the
 * sandbox was killed and with SandboxTaskError when the task threw; resolves with the task's answer.
 * Inputs and answers cross the boundary by structured clone (plain data, typed arrays; no functions).
 */
export interface Sandbox<I, O> {
  run(input: I, options?: SandboxRun): Promise<O>;
  /** Kills every sandbox; jobs still running reject with SandboxKilled `aborted`. */
  close(): Promise<void>;
}

/**
 * What a task module exports (loaded inside the sandbox by its path): `createTask(init)` is called once
 * per sandbox with the adapter's `init` data and returns the function that runs one job.
 */
export type TaskFactory<I, O> = (init: unknown) => Promise<(input: I) => Promise<O>> | ((input: I) => Promise<O>);
