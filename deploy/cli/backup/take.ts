// `invoicing backup`: a consistent copy of an embedded DATA_DIR while the system runs and writes
// (docs/operations.md "Backup and restore").
//
// Order is what makes it consistent. The databases first, each with SQLite's online backup API: one
// snapshot of each database as of one transaction. Then the files. Every file a database refers to
// was written (renamed into place, whole) before the write that refers to it committed — an expense's
// upload before the expense, a logo before the account names it — and no referenced file is ever
// deleted or rewritten (logos are content-addressed, PDFs keyed by the ETag of what they print, expense
// files have fresh random keys; only the sweeper deletes, and only files nothing refers to). So every
// file the snapshot refers to still exists when the files are copied. Files written after the snapshot
// are copied too: nothing in the restored databases refers to them (an upload caught half-way is swept
// after the restore, as after a crash).
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, Dirent, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import { assertEmbeddedDataDir, BackupRefused, isDatabaseCompanion, isPartialWrite, isSqliteDatabase, LEFT_OUT, RESTORE_MARKER } from './data-dir';
import { Hold } from './holds';
import { DATA, FORMAT, Manifest, MANIFEST, manifestChecksum, ManifestFile, sha256OfFile } from './manifest';

export interface BackupOptions {
  dataDir: string;
  /** A directory that does not exist yet, or is empty. */
  to: string;
  /** Database pages copied per step of the online backup (progress is reported per step). */
  pagesPerStep: number;
  appVersion: string;
  progress(line: string): void;
  hold?: Hold;
}

export interface BackupSummary {
  to: string;
  databases: string[];
  files: number;
  bytes: number;
  left_out: string[];
}

/** fsync: the file's bytes (or a directory's entries) reach the disk. */
export function syncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Copies a file chunk by chunk, hashing what it wrote; null when the file is gone (deleted since it was listed). */
export async function copyHashed(source: string, target: string): Promise<{ size: number; sha256: string } | null> {
  mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  const hash = createHash('sha256');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  try {
    await pipeline(createReadStream(source), tap, createWriteStream(target, { mode: 0o600 }));
    // On disk before the manifest (or the restore's end) says it is there: a crash cannot leave a
    // backup that claims a file the disk lost.
    syncFile(target);
  } catch (err) {
    rmSync(target, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return { size, sha256: hash.digest('hex') };
}

/**
 * One database through SQLite's online backup: steps of `pagesPerStep` pages. A write by the system
 * between two steps restarts the copy from its first page (SQLite's rule for another connection's
 * writes); a copy that restarted takes the rest in one step, which cannot be restarted — in WAL mode
 * it reads one snapshot and blocks no writer — so a busy system cannot keep the backup from ending.
 */
async function copyDatabase(source: string, target: string, options: BackupOptions): Promise<void> {
  const name = path.basename(source);
  const db = new Database(source, { readonly: true, fileMustExist: true, timeout: 5000 });
  try {
    let previous = Number.POSITIVE_INFINITY;
    let inOneStep = false;
    await db.backup(target, {
      progress: ({ totalPages, remainingPages }) => {
        if (!inOneStep && remainingPages >= previous) {
          inOneStep = true;
          options.progress(`${name}: changed during the copy; copying the rest in one step`);
        }
        previous = remainingPages;
        const copied = totalPages - remainingPages;
        options.progress(`${name}: ${copied}/${totalPages} pages`);
        if (copied > 0) options.hold?.('database-step');
        return inOneStep ? 0x7fffffff : options.pagesPerStep;
      },
    });
  } finally {
    db.close();
  }
  // A file of its own: the copy keeps the source's WAL flag; a rollback journal needs no -wal beside it.
  const copy = new Database(target);
  try {
    copy.pragma('journal_mode = DELETE');
    const verdict = copy.pragma('quick_check', { simple: true });
    if (verdict !== 'ok') throw new Error(`the copy of ${name} fails SQLite's check: ${String(verdict)}`);
  } finally {
    copy.close();
  }
  syncFile(target);
  options.progress(`${name}: copied`);
}

/** Every regular file under `dir` (relative, `/`-separated, sorted) that a backup carries. */
function filesToCopy(dataDir: string, databases: string[], leftOut: Set<string>): string[] {
  const walk = (dir: string, prefix: string): string[] =>
    readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))
      .flatMap((entry: Dirent) => {
        const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
        if (isPartialWrite(entry.name)) return [];
        if (!prefix && (entry.name in LEFT_OUT || entry.name === RESTORE_MARKER || databases.includes(entry.name))) return [];
        // Companions of the copied databases and of the left-out edge.db (its -wal while the system runs).
        if (!prefix && isDatabaseCompanion(entry.name, [...databases, ...Object.keys(LEFT_OUT)])) return [];
        if (entry.isDirectory()) return walk(path.join(dir, entry.name), relative);
        if (entry.isFile()) return [relative];
        leftOut.add(relative); // sockets, links: not data this system writes
        return [];
      });
  return walk(dataDir, '');
}

export async function takeBackup(options: BackupOptions): Promise<BackupSummary> {
  const dataDir = path.resolve(options.dataDir);
  const to = path.resolve(options.to);
  assertEmbeddedDataDir(dataDir);
  if (to === dataDir || to.startsWith(dataDir + path.sep)) {
    throw new BackupRefused('backup_inside_data_dir', `--to ${to} is inside the data directory ${dataDir}: put the backup elsewhere`);
  }
  if (existsSync(to) && readdirSync(to).length > 0) throw new BackupRefused('backup_target_not_empty', `${to} exists and is not empty: a backup goes to a new directory`);
  // Written beside the target and renamed at the end: a directory named --to is always a whole backup.
  const staging = `${to}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(path.join(staging, DATA), { recursive: true, mode: 0o700 });
  try {
    const entries = readdirSync(dataDir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
    const databases = entries.filter((e) => e.isFile() && !(e.name in LEFT_OUT) && isSqliteDatabase(path.join(dataDir, e.name))).map((e) => e.name);
    const files: ManifestFile[] = [];
    for (const name of databases) {
      const target = path.join(staging, DATA, name);
      await copyDatabase(path.join(dataDir, name), target, options);
      files.push({ path: name, kind: 'sqlite', size: statSync(target).size, sha256: await sha256OfFile(target) });
    }
    const databasesAt = new Date().toISOString();
    options.hold?.('databases-copied');

    const leftOut = new Set<string>(entries.filter((e) => e.name in LEFT_OUT).map((e) => e.name));
    const listed = filesToCopy(dataDir, databases, leftOut);
    options.progress(`files: ${listed.length} to copy`);
    let bytes = files.reduce((sum, f) => sum + f.size, 0);
    for (const [index, relative] of listed.entries()) {
      const copied = await copyHashed(path.join(dataDir, ...relative.split('/')), path.join(staging, DATA, ...relative.split('/')));
      if (!copied) {
        options.progress(`${relative}: deleted since it was listed (an unreferenced file), not copied`);
        continue;
      }
      files.push({ path: relative, kind: 'file', ...copied });
      bytes += copied.size;
      if ((index + 1) % 200 === 0) options.progress(`files: ${index + 1}/${listed.length}`);
    }

    const body: Omit<Manifest, 'checksum'> = {
      format: FORMAT,
      app_version: options.appVersion,
      created_at: new Date().toISOString(),
      source: dataDir,
      databases_at: databasesAt,
      files,
      left_out: [...leftOut].sort().map((p) => ({ path: p, why: LEFT_OUT[p] ?? 'not a regular file' })),
    };
    writeFileSync(path.join(staging, MANIFEST), JSON.stringify({ ...body, checksum: manifestChecksum(body) }, null, 2) + '\n', { mode: 0o600 });
    syncFile(path.join(staging, MANIFEST));
    if (existsSync(to)) rmSync(to, { recursive: true }); // empty (checked above)
    renameSync(staging, to);
    syncFile(path.dirname(to));
    options.progress(`done: ${files.length} files, ${bytes} bytes in ${to}`);
    return { to, databases, files: files.length, bytes, left_out: body.left_out.map((l) => l.path) };
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}
