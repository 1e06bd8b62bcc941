// Embedded adapter of the edge-state port (one gateway process): idempotency records in SQLite under
// DATA_DIR (edge.db, WAL) so they survive a restart, and rate-limit counters in memory (a restart
// starts fresh windows, which can only let a client through early, never refuse it wrongly), as are
// attempt backoffs (a restart forgets lockouts: it can only let an attempt through early).
//
// Every write is one atomic statement on the fast path — begin is a conditional upsert (insert, or
// take over an expired record), complete an UPDATE guarded by the owner — so a POST costs two small
// commits; the rare other cases (a live record to report, a marker that vanished) run in IMMEDIATE
// transactions.
//
// The file belongs to one process: it is locked exclusively (a second process on the same DATA_DIR is
// refused instead of racing), which also spares every commit its file-lock system calls. Handles
// opened on the same file within the process share one connection.
import path from 'node:path';
import Database from 'better-sqlite3';
import { AttemptOutcome, BackoffPolicy, BeginOutcome, EdgeState, IdempotencyClaim, StoredResponse, WindowCount } from '../ports/edge-state';

interface Row {
  fingerprint: string;
  state: 'running' | 'done';
  owner: string | null;
  request_id: string;
  status: number | null;
  headers: string | null;
  body: Buffer | null;
  expires_at: number;
}

export interface SqliteEdgeStateOptions {
  /** How often expired records and windows are swept (default 60 s); expired ones are invisible anyway. */
  sweepEveryMs?: number;
}

const COLUMNS = 'fingerprint, state, owner, request_id, status, headers, body, expires_at';
/** Rows examined per step of a sweep. */
const SWEEP_BATCH = 500;

const connections = new Map<string, { db: Database.Database; handles: number }>();

/** Opens (or shares) the file's connection; `first` when this call opened it. */
function openShared(file: string): { db: Database.Database; first: boolean } {
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
    shared = { db, handles: 0 };
    connections.set(key, shared);
  }
  shared.handles += 1;
  return { db: shared.db, first };
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
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly attempts = new Map<string, { attempts: number; lockedUntil: number; forgetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly get: Database.Statement<[string], Row>;
  private readonly claim: Database.Statement<[string, string, string, string, number, number]>;
  private readonly finish: Database.Statement<[number, string, Buffer, number, string, string]>;
  private readonly put: Database.Statement<[string, string, string, number, string, Buffer, number]>;
  private readonly renewStmt: Database.Statement<[number, string, string, number]>;
  private readonly releaseStmt: Database.Statement<[string, string, number]>;
  private readonly oldestStmt: Database.Statement<[number, number], { rowid: number; expires_at: number }>;
  private readonly sweepStmt: Database.Statement<[number, number, number]>;
  private closed = false;
  private readonly completeTx: (scope: string, claim: IdempotencyClaim, response: StoredResponse, ttlMs: number) => boolean;

  constructor(private readonly file: string, options: SqliteEdgeStateOptions = {}) {
    const { db, first } = openShared(file);
    this.db = db;
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
    this.get = this.db.prepare(`SELECT ${COLUMNS} FROM idempotency_records WHERE scope = ?`);
    // Insert, or take over a record whose time is up; a live record is left alone (0 changes).
    this.claim = this.db.prepare(
      `INSERT INTO idempotency_records (scope, fingerprint, state, owner, request_id, expires_at) VALUES (?, ?, 'running', ?, ?, ?)
       ON CONFLICT(scope) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running', owner = excluded.owner,
         request_id = excluded.request_id, status = NULL, headers = NULL, body = NULL, expires_at = excluded.expires_at
       WHERE idempotency_records.expires_at <= ?`,
    );
    this.finish = this.db.prepare(
      `UPDATE idempotency_records SET state = 'done', owner = NULL, status = ?, headers = ?, body = ?, expires_at = ?
       WHERE scope = ? AND owner = ? AND state = 'running'`,
    );
    this.put = this.db.prepare(
      `INSERT INTO idempotency_records (scope, fingerprint, state, owner, request_id, status, headers, body, expires_at)
       VALUES (?, ?, 'done', NULL, ?, ?, ?, ?, ?)
       ON CONFLICT(scope) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'done', owner = NULL, request_id = excluded.request_id,
         status = excluded.status, headers = excluded.headers, body = excluded.body, expires_at = excluded.expires_at`,
    );
    this.renewStmt = this.db.prepare(
      `UPDATE idempotency_records SET expires_at = ? WHERE scope = ? AND owner = ? AND state = 'running' AND expires_at > ?`,
    );
    this.releaseStmt = this.db.prepare(`DELETE FROM idempotency_records WHERE scope = ? AND owner = ? AND state = 'running' AND expires_at > ?`);
    this.oldestStmt = this.db.prepare('SELECT rowid, expires_at FROM idempotency_records WHERE rowid > ? ORDER BY rowid LIMIT ?');
    this.sweepStmt = this.db.prepare('DELETE FROM idempotency_records WHERE rowid BETWEEN ? AND ? AND expires_at <= ?');

    // complete() when the owner's marker is gone: write unless another attempt holds a live record.
    const complete = this.db.transaction((scope: string, claim: IdempotencyClaim, response: StoredResponse, ttlMs: number): boolean => {
      const now = Date.now();
      if (this.finish.run(response.status, JSON.stringify(response.headers), response.body, now + ttlMs, scope, claim.owner).changes === 1) return true;
      const row = this.get.get(scope);
      if (row && row.expires_at > now) return false;
      this.put.run(scope, claim.fingerprint, claim.requestId, response.status, JSON.stringify(response.headers), response.body, now + ttlMs);
      return true;
    });
    this.completeTx = (scope, claim, response, ttlMs) => complete.immediate(scope, claim, response, ttlMs);
    // The file is locked to this process, so an in-progress marker found when the connection opens was
    // left by a process that died mid-request: drop it, and a retry executes at once instead of waiting
    // out the lease (safe: the services answer a re-executed request with its first result).
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
    for (;;) {
      const now = Date.now();
      if (this.claim.run(scope, claim.fingerprint, claim.owner, claim.requestId, now + leaseMs, now).changes === 1) return { outcome: 'started' };
      const row = this.get.get(scope);
      // Gone or expired between the two statements (released, swept, timed out): claim again.
      if (!row || row.expires_at <= Date.now()) continue;
      if (row.state === 'running') return { outcome: 'running', fingerprint: row.fingerprint, requestId: row.request_id };
      return {
        outcome: 'done',
        fingerprint: row.fingerprint,
        requestId: row.request_id,
        response: { status: row.status!, headers: JSON.parse(row.headers!) as Record<string, string>, body: row.body ?? Buffer.alloc(0) },
      };
    }
  }

  async renew(scope: string, owner: string, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    return this.renewStmt.run(now + leaseMs, scope, owner, now).changes === 1;
  }

  async complete(scope: string, claim: IdempotencyClaim, response: StoredResponse, ttlMs: number): Promise<boolean> {
    const headers = JSON.stringify(response.headers);
    if (this.finish.run(response.status, headers, response.body, Date.now() + ttlMs, scope, claim.owner).changes === 1) return true;
    return this.completeTx(scope, claim, response, ttlMs);
  }

  async release(scope: string, owner: string): Promise<boolean> {
    return this.releaseStmt.run(scope, owner, Date.now()).changes === 1;
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
    if (this.closed) return;
    for (let after = 0; ; ) {
      const batch = this.oldestStmt.all(after, SWEEP_BATCH);
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
