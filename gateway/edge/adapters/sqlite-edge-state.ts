// Embedded adapter of the edge-state port (one gateway process): completed idempotency records in
// SQLite under DATA_DIR (edge.db, WAL) so they survive a restart; in-progress markers, rate-limit
// counters and attempt backoffs in memory.
//
// Why markers need no file: edge.db is locked exclusively to this process (a second process on the same
// DATA_DIR is refused instead of racing, which also spares every commit its file-lock system calls), so
// a marker can only ever be seen by this process, and a marker this process left when it died is
// dropped when the file is opened again anyway (the services answer a re-executed request with its
// first result). Kept in memory they cost nothing to write: a POST under a key costs one point read
// (begin) and one small commit (complete) instead of two commits. Every method checks and changes the
// markers and the file synchronously, with no await in between, so each is atomic in the one thread.
// A restart starts with no markers, as it did when they were rows deleted at start-up; counters and
// backoffs likewise start fresh, which can only let a client or an attempt through early.
//
// Handles opened on the same file within the process share one connection and one set of markers.
import path from 'node:path';
import Database from 'better-sqlite3';
import { AttemptOutcome, BackoffPolicy, BeginOutcome, EdgeState, IdempotencyClaim, StoredResponse, WindowCount } from '../ports/edge-state';

/** A completed record (the table's `state` column is always 'done' now; 'running' rows are from older versions). */
interface Row {
  fingerprint: string;
  request_id: string;
  status: number;
  headers: string;
  body: Buffer | null;
  expires_at: number;
}

/** An attempt in progress under a scope: who owns it and until when its lease runs. */
interface Marker {
  fingerprint: string;
  owner: string;
  requestId: string;
  expiresAt: number;
}

interface Shared {
  db: Database.Database;
  handles: number;
  markers: Map<string, Marker>;
}

export interface SqliteEdgeStateOptions {
  /** How often expired records and windows are swept (default 60 s); expired ones are invisible anyway. */
  sweepEveryMs?: number;
}

const COLUMNS = 'fingerprint, request_id, status, headers, body, expires_at';
/** Rows examined per step of a sweep. */
const SWEEP_BATCH = 500;

const connections = new Map<string, Shared>();

/** Opens (or shares) the file's connection and markers; `first` when this call opened it. */
function openShared(file: string): Shared & { first: boolean } {
  const key = path.resolve(file);
  let shared = connections.get(key);
  const first = !shared;
  if (!shared) {
    const db = new Database(key, { timeout: 2000 });
    db.pragma('locking_mode = EXCLUSIVE');
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Take the lock now, so a second process fails at start-up rather than at its first write.
      db.exec('BEGIN IMMEDIATE; COMMIT');
    } catch (err) {
      db.close();
      if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new Error(`${key} is in use by another process (one embedded system per DATA_DIR)`);
      throw err;
    }
    shared = { db, handles: 0, markers: new Map() };
    connections.set(key, shared);
  }
  shared.handles += 1;
  return { ...shared, first };
}

function releaseShared(file: string): void {
  const key = path.resolve(file);
  const shared = connections.get(key);
  if (!shared || --shared.handles > 0) return;
  connections.delete(key);
  shared.db.close();
}

export class SqliteEdgeState implements EdgeState {
  readonly kind = 'embedded';
  private readonly db: Database.Database;
  /** In-progress markers by scope, shared by the handles of the file (see the header). */
  private readonly markers: Map<string, Marker>;
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly attempts = new Map<string, { attempts: number; lockedUntil: number; forgetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly get: Database.Statement<[string, number], Row>;
  private readonly put: Database.Statement<[string, string, string, number, string, Buffer, number]>;
  private readonly oldestStmt: Database.Statement<[number], { rowid: number; expires_at: number }>;
  private readonly sweepStmt: Database.Statement<[number, number, number]>;
  private closed = false;

  constructor(private readonly file: string, options: SqliteEdgeStateOptions = {}) {
    const { db, markers, first } = openShared(file);
    this.db = db;
    this.markers = markers;
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS idempotency_records (
        scope TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('running', 'done')),
        owner TEXT,
        request_id TEXT NOT NULL,
        status INTEGER,
        headers TEXT,
        body BLOB,
        expires_at INTEGER NOT NULL
      );
      -- Sweeps walk the table in rowid (insertion) order instead: an index on expires_at would cost
      -- every begin and complete another page write.
      DROP INDEX IF EXISTS idempotency_records_expiry;
    `);
    // Only completed records are written; a 'running' row can only be a dead process's (dropped below).
    this.get = this.db.prepare(`SELECT ${COLUMNS} FROM idempotency_records WHERE scope = ? AND state = 'done' AND expires_at > ?`);
    // The completed record, in place of any earlier one under the scope (only an expired one can be there: checked first).
    this.put = this.db.prepare(
      `INSERT INTO idempotency_records (scope, fingerprint, state, owner, request_id, status, headers, body, expires_at)
       VALUES (?, ?, 'done', NULL, ?, ?, ?, ?, ?)
       ON CONFLICT(scope) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'done', owner = NULL, request_id = excluded.request_id,
         status = excluded.status, headers = excluded.headers, body = excluded.body, expires_at = excluded.expires_at`,
    );
    // The LIMIT is written, not bound: SQLite prepares a statement again whenever a bound LIMIT is rebound.
    this.oldestStmt = this.db.prepare(`SELECT rowid, expires_at FROM idempotency_records WHERE rowid > ? ORDER BY rowid LIMIT ${SWEEP_BATCH}`);
    this.sweepStmt = this.db.prepare('DELETE FROM idempotency_records WHERE rowid BETWEEN ? AND ? AND expires_at <= ?');

    // Files written by earlier versions kept markers as rows. The file is locked to this process, so a
    // marker found when the connection opens was left by a process that died mid-request: drop it, and a
    // retry executes at once instead of waiting out the lease (safe: the services answer a re-executed
    // request with its first result).
    if (first) this.db.prepare(`DELETE FROM idempotency_records WHERE state = 'running'`).run();
    this.sweeper = setInterval(() => this.sweep(), options.sweepEveryMs ?? 60_000);
    this.sweeper.unref();
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetMs: window.resetAt - now };
  }

  async refund(key: string): Promise<void> {
    const window = this.windows.get(key);
    if (window && window.resetAt > Date.now() && window.count > 0) window.count -= 1;
  }

  async attempt(key: string, policy: BackoffPolicy): Promise<AttemptOutcome> {
    const now = Date.now();
    let entry = this.attempts.get(key);
    if (!entry || entry.forgetAt <= now) entry = { attempts: 0, lockedUntil: 0, forgetAt: 0 };
    if (now < entry.lockedUntil) return { allowed: false, attempts: entry.attempts, retryAfterMs: entry.lockedUntil - now };
    entry.attempts += 1;
    const beyond = entry.attempts - policy.freeAttempts;
    const lockMs = beyond < 0 ? 0 : Math.min(policy.maxLockMs, policy.baseLockMs * 2 ** beyond);
    if (lockMs > 0) entry.lockedUntil = now + lockMs;
    entry.forgetAt = now + lockMs + policy.forgetMs;
    this.attempts.set(key, entry);
    return { allowed: true, attempts: entry.attempts, lockMs };
  }

  async clearAttempts(key: string): Promise<void> {
    this.attempts.delete(key);
  }

  async begin(scope: string, claim: IdempotencyClaim, leaseMs: number): Promise<BeginOutcome> {
    const now = Date.now();
    const marker = this.markers.get(scope);
    if (marker && marker.expiresAt > now) return { outcome: 'running', fingerprint: marker.fingerprint, requestId: marker.requestId };
    const row = this.get.get(scope, now);
    if (row) {
      return {
        outcome: 'done',
        fingerprint: row.fingerprint,
        requestId: row.request_id,
        response: { status: row.status, headers: JSON.parse(row.headers) as Record<string, string>, body: row.body ?? Buffer.alloc(0) },
      };
    }
    // No live record: take the scope (over an expired marker, whose owner can then no longer complete).
    this.markers.set(scope, { fingerprint: claim.fingerprint, owner: claim.owner, requestId: claim.requestId, expiresAt: now + leaseMs });
    return { outcome: 'started' };
  }

  async renew(scope: string, owner: string, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    const marker = this.markers.get(scope);
    if (!marker || marker.owner !== owner || marker.expiresAt <= now) return false;
    marker.expiresAt = now + leaseMs;
    return true;
  }

  async complete(scope: string, claim: IdempotencyClaim, response: StoredResponse, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const marker = this.markers.get(scope);
    if (marker?.owner !== claim.owner) {
      // The owner's marker is gone (its lease expired and the scope was taken over, or it was swept):
      // write unless another attempt holds a live record.
      if (marker && marker.expiresAt > now) return false;
      if (this.get.get(scope, now)) return false;
    }
    // While the owner's marker is in place nobody completed the scope since its begin (a completion
    // removes the marker, a takeover replaces it), so the write needs no read.
    this.put.run(scope, claim.fingerprint, claim.requestId, response.status, JSON.stringify(response.headers), response.body, now + ttlMs);
    this.markers.delete(scope);
    return true;
  }

  async release(scope: string, owner: string): Promise<boolean> {
    const marker = this.markers.get(scope);
    if (!marker || marker.owner !== owner || marker.expiresAt <= Date.now()) return false;
    this.markers.delete(scope);
    return true;
  }

  /**
   * Drops expired records and windows (already invisible; this only reclaims space). Records expire
   * roughly in the order they were written (one TTL for all), so the sweep walks the oldest rows and
   * stops at the first batch that is not wholly expired; a live record near the front (a key taken
   * over after expiry) only delays reclaiming the expired ones behind it until it expires itself.
   */
  sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
    for (const [key, entry] of this.attempts) if (entry.forgetAt <= now) this.attempts.delete(key);
    for (const [scope, marker] of this.markers) if (marker.expiresAt <= now) this.markers.delete(scope);
    if (this.closed) return;
    for (let after = 0; ; ) {
      const batch = this.oldestStmt.all(after);
      if (batch.length === 0) return;
      const firstLive = batch.findIndex((row) => row.expires_at > now);
      const last = firstLive === -1 ? batch[batch.length - 1] : batch[firstLive - 1];
      if (last) this.sweepStmt.run(batch[0].rowid, last.rowid, now);
      if (firstLive !== -1 || batch.length < SWEEP_BATCH) return;
      after = last.rowid;
    }
  }

  async ping(): Promise<void> {
    // Handles share one connection: a closed handle answers no more, even while others keep it open.
    if (this.closed) throw new Error('the edge state is closed');
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    if (this.closed) return;
    this.closed = true;
    releaseShared(this.file);
  }
}
