/**
 * Test helpers around scripts/engines.sh: start/stop the real engines
 * (FerretDB as MongoDB, Redis, Kafka, MinIO) for integration tests.
 *
 *   const env = await startEngines(runDir);   // { MONGO_URL, REDIS_URL, KAFKA_BROKERS, MINIO_* }
 *   ...
 *   await restartKafka(runDir, async () => { ... while Kafka is down ... });
 *   await stopEngines(runDir);
 *
 * If MONGO_URL, REDIS_URL, KAFKA_BROKERS and MINIO_ENDPOINT are all already set
 * in process.env, startEngines() returns those and starts nothing.
 *
 * The first call on a fresh machine provisions (builds) the engines, which takes
 * many minutes (see docs/engines.md); run `bash scripts/engines.sh provision`
 * beforehand or give the setup hook a generous timeout.
 *
 * Node stdlib only; works from CommonJS and ESM builds.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export type EngineEnv = Record<string, string>;
export type EngineName = 'redis' | 'ferretdb' | 'kafka' | 'minio';

/** Variables that must all be set for externally managed engines to be used. */
export const REQUIRED_ENGINE_VARS = ['MONGO_URL', 'REDIS_URL', 'KAFKA_BROKERS', 'MINIO_ENDPOINT'] as const;

/** Every variable written to engines.env. */
export const ENGINE_VARS = [
  'MONGO_URL',
  'REDIS_URL',
  'KAFKA_BROKERS',
  'MINIO_ENDPOINT',
  'MINIO_PORT',
  'MINIO_ACCESS_KEY',
  'MINIO_SECRET_KEY',
  'MINIO_USE_SSL',
] as const;

function repoRoot(): string {
  // test/support/engines.ts -> repo root; also works from a compiled copy in
  // dist/test/support as long as scripts/engines.sh is found walking upwards.
  let dir = typeof __dirname !== 'undefined' ? __dirname : process.cwd();
  for (let i = 0; i < 6; i++) {
    if (existsSync(path.join(dir, 'scripts', 'engines.sh'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return process.cwd();
}

function scriptPath(): string {
  return process.env.ENGINES_SCRIPT ?? path.join(repoRoot(), 'scripts', 'engines.sh');
}

/**
 * Runs `bash scripts/engines.sh ...args`. Its progress lines go to our stderr
 * (unless ENGINES_QUIET=1); on failure the error carries the output's tail.
 */
export function runEnginesScript(args: string[]): Promise<void> {
  const quiet = process.env.ENGINES_QUIET === '1';
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [scriptPath(), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    });
    let tail = '';
    const onData = (chunk: Buffer) => {
      if (!quiet) process.stderr.write(chunk);
      tail = (tail + chunk.toString('utf8')).slice(-8000);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `scripts/engines.sh ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${tail}`,
          ),
        );
    });
  });
}

/** Parses `export KEY=value` / `KEY=value` lines. */
export function parseEnvFile(text: string): EngineEnv {
  const env: EngineEnv = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2];
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) {
      value = value.slice(1, -1);
    }
    env[m[1]] = value;
  }
  return env;
}

/** Reads <runDir>/engines.env written by `engines.sh start`. */
export function loadEngineEnv(runDir: string): EngineEnv {
  return parseEnvFile(readFileSync(path.join(runDir, 'engines.env'), 'utf8'));
}

/** The engines given by the environment, or undefined if not all required vars are set. */
export function externalEngineEnv(): EngineEnv | undefined {
  if (!REQUIRED_ENGINE_VARS.every((k) => !!process.env[k])) return undefined;
  const env: EngineEnv = {};
  for (const k of ENGINE_VARS) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/**
 * Starts Redis, FerretDB, Kafka and MinIO with their data under runDir (provisioning
 * them first if needed) and resolves with the connection variables from engines.env.
 * Idempotent: engines already running for runDir are reused.
 */
export async function startEngines(runDir: string): Promise<EngineEnv> {
  const external = externalEngineEnv();
  if (external) return external;
  const dir = path.resolve(runDir);
  await runEnginesScript(['start', dir]);
  return loadEngineEnv(dir);
}

/** Stops the engines started for runDir (TERM, then KILL). Safe to call repeatedly. */
export async function stopEngines(runDir: string): Promise<void> {
  await runEnginesScript(['stop', path.resolve(runDir)]);
}

/** Stops one engine of runDir; its data and port are kept for startEngine(). */
export async function stopEngine(name: EngineName, runDir: string): Promise<void> {
  await runEnginesScript(['stop-one', name, path.resolve(runDir)]);
}

/** (Re)starts one engine of runDir on the same port with the same data; resolves once it is ready. */
export async function startEngine(name: EngineName, runDir: string): Promise<void> {
  await runEnginesScript(['start-one', name, path.resolve(runDir)]);
}

/**
 * Stops Kafka, runs `whileDown` (if given) while it is down, then starts it again
 * on the same port with the same log dirs and waits until the broker answers.
 * Kafka is restarted even if `whileDown` throws (the error is rethrown after).
 */
export async function restartKafka(runDir: string, whileDown?: () => Promise<void>): Promise<void> {
  if (externalEngineEnv() && !existsSync(path.join(path.resolve(runDir), 'pids'))) {
    throw new Error('restartKafka: engines are managed externally (env vars set); cannot restart Kafka');
  }
  await stopEngine('kafka', runDir);
  try {
    if (whileDown) await whileDown();
  } finally {
    await startEngine('kafka', runDir);
  }
}
