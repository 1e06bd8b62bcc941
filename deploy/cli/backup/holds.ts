// TEST ONLY: hold points inside `invoicing backup`, so a test can put writes at an exact place in it
// (between two steps of a database copy; between the databases and the files) instead of hoping a
// sleep lands there. INVOICING_BACKUP_TEST_HOLD_DIR names a directory; at point P the backup creates
// P.reached there and waits until the test creates P.release. Refused in production.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BackupRefused } from './data-dir';

export type HoldPoint = 'database-step' | 'databases-copied';

export type Hold = (point: HoldPoint) => void;

/** A hold never released: the test that set it failed; the backup must not hang forever. */
const HOLD_LIMIT_MS = 300_000;

export function holdsFromEnv(env: NodeJS.ProcessEnv = process.env): Hold {
  const dir = env.INVOICING_BACKUP_TEST_HOLD_DIR;
  if (!dir) return () => undefined;
  if (env.NODE_ENV === 'production') throw new BackupRefused('test_hold_in_production', 'INVOICING_BACKUP_TEST_HOLD_DIR must not be set in production');
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const passed = new Set<HoldPoint>();
  return (point) => {
    // Each point holds once: the first time it is reached.
    if (passed.has(point)) return;
    passed.add(point);
    writeFileSync(path.join(dir, `${point}.reached`), '');
    const release = path.join(dir, `${point}.release`);
    const deadline = Date.now() + HOLD_LIMIT_MS;
    // Synchronous on purpose: the database step that reaches it is inside SQLite's progress callback.
    while (!existsSync(release)) {
      if (Date.now() > deadline) throw new Error(`test hold ${point} was not released in ${HOLD_LIMIT_MS / 1000} s`);
      Atomics.wait(sleeper, 0, 0, 10);
    }
  };
}
