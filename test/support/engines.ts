// Test helpers around scripts/engines.sh for suites that drive one engine themselves (e.g. the documents
// events suite starts a Kafka of its own, stops it and restarts it on the same port and data).
// The run's shared engines are started once by scripts/test-all.sh; see test/support/real-engines.ts.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../services/shared/paths';

export type EngineName = 'redis' | 'ferretdb' | 'kafka' | 'minio' | 'mailpit';

/** Runs `bash scripts/engines.sh ...args`; progress goes to stderr (unless ENGINES_QUIET=1), failures carry the output's tail. */
export function runEnginesScript(args: string[]): Promise<void> {
  const quiet = process.env.ENGINES_QUIET === '1';
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [path.join(repoRoot, 'scripts', 'engines.sh'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
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
      else reject(new Error(`scripts/engines.sh ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${tail}`));
    });
  });
}

/** Stops one engine of runDir; its data and port are kept for startEngine(). */
export function stopEngine(name: EngineName, runDir: string): Promise<void> {
  return runEnginesScript(['stop-one', name, path.resolve(runDir)]);
}

/** (Re)starts one engine of runDir on the same port with the same data; resolves once it is ready. */
export function startEngine(name: EngineName, runDir: string): Promise<void> {
  return runEnginesScript(['start-one', name, path.resolve(runDir)]);
}

/** The port an engine of runDir listens on (`kafka`, `ferretdb`, `mailpit_http`, … as in its ports file). */
export function enginePort(runDir: string, name: string): number {
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(readFileSync(path.join(runDir, 'ports'), 'utf8'));
  if (!match) throw new Error(`no port of ${name} in ${runDir}/ports`);
  return Number(match[1]);
}
