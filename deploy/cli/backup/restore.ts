// `invoicing restore`: a backup into a DATA_DIR (docs/operations.md "Backup and restore").
//
// Nothing is touched until the whole backup is verified against its manifest. Then, holding the lock
// a running system would hold (so none runs now, and none starts until the end), with a marker that
// keeps the embedded system from starting on a half-restored directory: the old data is removed
// (--force), each file is written under a temporary name, checked and renamed into place.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assertNoSystemRuns, BackupRefused, lockDataDir, RESTORE_MARKER } from './data-dir';
import { DATA, verifyBackup } from './manifest';
import { copyHashed, syncFile } from './take';

export interface RestoreOptions {
  from: string;
  dataDir: string;
  /** Replace what the target holds (refused otherwise). */
  force: boolean;
  progress(line: string): void;
}

export interface RestoreSummary {
  data_dir: string;
  files: number;
  bytes: number;
  created_at: string;
  app_version: string;
}

/** What the lock itself leaves in the target (edge.db and its companions). */
const isLockFile = (name: string) => /^edge\.db(-wal|-shm|-journal)?$/.test(name);

/** Refuses a target with data (or an interrupted restore) unless --force; the entries --force removes. */
function assertRestorable(dataDir: string, force: boolean): string[] {
  const present = readdirSync(dataDir).filter((name) => !isLockFile(name) && name !== RESTORE_MARKER);
  const interrupted = existsSync(path.join(dataDir, RESTORE_MARKER));
  if ((present.length > 0 || interrupted) && !force) {
    const shown = present.slice(0, 5).join(', ') + (present.length > 5 ? ', …' : '');
    throw new BackupRefused(
      'data_dir_not_empty',
      interrupted
        ? `${dataDir} holds an interrupted restore: run restore again with --force`
        : `${dataDir} is not empty (${shown}): restore into an empty directory, or give --force to replace its data`,
    );
  }
  return present;
}

export async function restoreBackup(options: RestoreOptions): Promise<RestoreSummary> {
  const from = path.resolve(options.from);
  const dataDir = path.resolve(options.dataDir);
  if (dataDir === from || dataDir.startsWith(from + path.sep) || from.startsWith(dataDir + path.sep)) {
    throw new BackupRefused('restore_overlaps_backup', `the backup ${from} and the data directory ${dataDir} overlap`);
  }
  // The cheap refusals first, before a long verification; checked again under the lock.
  if (existsSync(dataDir)) {
    assertNoSystemRuns(dataDir);
    assertRestorable(dataDir, options.force);
  }
  options.progress(`verifying ${from}`);
  const manifest = await verifyBackup(from);
  options.progress(`verified: ${manifest.files.length} files, written by version ${manifest.app_version} at ${manifest.created_at}`);

  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = lockDataDir(dataDir);
  try {
    const present = assertRestorable(dataDir, options.force);
    writeFileSync(path.join(dataDir, RESTORE_MARKER), `${new Date().toISOString()} restore of ${from}\n`, { mode: 0o600 });
    for (const name of present) rmSync(path.join(dataDir, name), { recursive: true, force: true });
    // The replay records of the data just removed must not answer for the restored data.
    lock.clearEdgeState();

    let bytes = 0;
    for (const [index, entry] of manifest.files.entries()) {
      const target = path.join(dataDir, ...entry.path.split('/'));
      const partial = `${target}.restore.tmp`;
      const copied = await copyHashed(path.join(from, DATA, ...entry.path.split('/')), partial);
      // Verified a moment ago; checked again as written, in case the backup changed in between.
      if (!copied || copied.sha256 !== entry.sha256) {
        throw new BackupRefused('backup_damaged', `the backup is damaged or was altered: ${entry.path} changed while it was restored; run restore again`);
      }
      renameSync(partial, target);
      bytes += copied.size;
      if ((index + 1) % 200 === 0) options.progress(`files: ${index + 1}/${manifest.files.length}`);
    }
    // Every file was synced as written; the renames are made durable before the marker goes.
    for (const dir of new Set(manifest.files.map((f) => path.dirname(path.join(dataDir, ...f.path.split('/')))))) syncFile(dir);
    rmSync(path.join(dataDir, RESTORE_MARKER));
    syncFile(dataDir);
    options.progress(`done: ${manifest.files.length} files, ${bytes} bytes in ${dataDir}`);
    return { data_dir: dataDir, files: manifest.files.length, bytes, created_at: manifest.created_at, app_version: manifest.app_version };
  } finally {
    lock.release();
  }
}
