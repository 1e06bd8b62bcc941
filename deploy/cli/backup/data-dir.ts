// What an embedded DATA_DIR holds, and which of it a backup carries (docs/operations.md "Backup and
// restore"). SQLite databases are copied with SQLite's online backup (a consistent snapshot while the
// system writes); every other file as it is; runtime state of the running process is left out.
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

import { BackupRefused } from './refused';

export { BackupRefused };

/** Top-level entries of DATA_DIR that are not data, and why. */
export const LEFT_OUT: Record<string, string> = {
  'runtime.json': "the running process's pid and socket addresses",
  grpc: "the running process's sockets",
  spool: 'uploads in flight (each file is deleted when its request ends)',
  // Locked exclusively by the running process, so no other process can read it; it is a 24 h replay
  // cache, and at-most-once is kept by the services, in invoicing.db (docs/edge.md "At most once").
  'edge.db': "the gateway's idempotency replay records (a 24 h cache; at-most-once is kept in invoicing.db)",
};

/** A restore in progress (or interrupted) into a DATA_DIR: the embedded system refuses to start on it. */
export const RESTORE_MARKER = '.restore-in-progress';

/** The store's database: a DATA_DIR without it holds no embedded data. */
export const STORE_DATABASE = 'invoicing.db';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

export function isSqliteDatabase(file: string): boolean {
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(file, 'r');
  try {
    return readSync(fd, header, 0, header.length, 0) === header.length && header.equals(SQLITE_HEADER);
  } finally {
    closeSync(fd);
  }
}

/** A database's companion files (write-ahead log, shared memory, rollback journal): folded into the copy. */
export const isDatabaseCompanion = (name: string, databases: string[]) =>
  databases.some((db) => name === `${db}-wal` || name === `${db}-shm` || name === `${db}-journal`);

/** Partial writes (blob and mail outbox files are written under a temporary name, then renamed). */
export const isPartialWrite = (name: string) => name.endsWith('.tmp');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

interface Runtime {
  pid?: number;
  /** Where the running system keeps each kind of data (deploy/embedded/main.ts). */
  engines?: { store?: string; blobs?: string };
}

function readRuntime(dataDir: string): Runtime | undefined {
  const file = path.join(dataDir, 'runtime.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Runtime;
  } catch {
    return undefined;
  }
}

const DISTRIBUTED_HINT =
  'a system on MongoDB/FerretDB and MinIO is backed up with its engines\' tools (mongodump, mc mirror; docs/operations.md "Backup and restore")';

/** Refuses a directory that is not an embedded system's data: nothing to copy, or data kept elsewhere. */
export function assertEmbeddedDataDir(dataDir: string): void {
  if (!existsSync(dataDir)) throw new BackupRefused('data_dir_missing', `${dataDir} does not exist`);
  const engines = readRuntime(dataDir)?.engines;
  const elsewhere = [engines?.store && engines.store !== 'sqlite' ? `documents in ${engines.store}` : '', engines?.blobs && engines.blobs !== 'fs' ? `files in ${engines.blobs}` : '']
    .filter(Boolean)
    .join(', ');
  if (elsewhere) throw new BackupRefused('not_embedded_data_dir', `the system on ${dataDir} keeps ${elsewhere}, not in DATA_DIR: ${DISTRIBUTED_HINT}`);
  if (existsSync(path.join(dataDir, RESTORE_MARKER))) {
    throw new BackupRefused('restore_in_progress', `${dataDir} is being restored, or its restore was interrupted: its data is not whole`);
  }
  if (!existsSync(path.join(dataDir, STORE_DATABASE))) {
    throw new BackupRefused('not_embedded_data_dir', `${dataDir} holds no ${STORE_DATABASE}, so no embedded system's data: ${DISTRIBUTED_HINT}`);
  }
}

/** Held while a restore writes a DATA_DIR: the lock a running embedded system holds for its lifetime. */
export interface DataDirLock {
  release(): void;
  /** Empties the edge state the lock's file holds (its replay records belong to the data being replaced). */
  clearEdgeState(): void;
}

const runningOn = (dataDir: string, pid: number | undefined) =>
  new BackupRefused('system_running', `a system is running on ${dataDir} (pid ${pid ?? 'unknown'}): stop it first (a restore replaces the data under it)`);

/** Opens edge.db and takes its lock as the system does (exclusive locking, WAL, a write transaction), or refuses. */
function takeEdgeLock(dataDir: string, options: { create: boolean }): Database.Database | undefined {
  const file = path.join(dataDir, 'edge.db');
  if (!options.create && !existsSync(file)) return undefined;
  const db = new Database(file, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = WAL');
    db.exec('BEGIN IMMEDIATE; COMMIT');
    return db;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw runningOn(dataDir, readRuntime(dataDir)?.pid);
    throw err;
  }
}

/**
 * Refuses when a system runs on DATA_DIR. The embedded system holds edge.db exclusively from start to
 * exit (gateway/edge/adapters/sqlite-edge-state.ts): when that lock can be taken, none runs. A system
 * whose edge state is in Redis holds no such lock; its live pid in runtime.json refuses as well.
 */
export function assertNoSystemRuns(dataDir: string): void {
  const runtime = readRuntime(dataDir);
  if (runtime?.pid && runtime.pid !== process.pid && alive(runtime.pid)) throw runningOn(dataDir, runtime.pid);
  takeEdgeLock(dataDir, { create: false })?.close();
}

/**
 * Takes DATA_DIR's lock — the one a running embedded system holds — or refuses: no system runs while it
 * is held, and none can start until it is released.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  assertNoSystemRuns(dataDir);
  const db = takeEdgeLock(dataDir, { create: true })!;
  return {
    release: () => db.close(),
    clearEdgeState: () => {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
      db.transaction(() => {
        for (const table of tables) db.exec(`DROP TABLE "${table.replace(/"/g, '""')}"`);
      })();
    },
  };
}
