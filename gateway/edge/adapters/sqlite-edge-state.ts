// Embedded adapter of the edge-state port (one gateway process): idempotency records in SQLite under
// DATA_DIR (edge.db, WAL) so they survive a restart, and rate-limit counters in memory (a restart
// starts fresh windows, which can only let a client through early, never refuse it wrongly).
// Every read-modify-write runs in an IMMEDIATE transaction, so two handles on one file (or two
// processes) still see begin() as atomic; within the process JavaScript's single thread already does.
import Database from 'better-sqlite3';
import { BeginOutcome, deserializeResponse, EdgeState, IdempotencyClaim, serializeResponse, StoredResponse, WindowCount } from '../ports/edge-state';

interface Row {
  fingerprint: string;
  state: 'running' | 'done';
  owner: string | null;
  request_id: string;
  response: string | null;
  expires_at: number;
}

export interface SqliteEdgeStateOptions {
  /** How often expired records and windows are swept (default 60 s); expired ones are invisible anyway. */
  sweepEveryMs?: number;
}

export class SqliteEdgeState implements EdgeState {
  readonly kind = 'embedded';
  private readonly db: Database.Database;
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly get: Database.Statement<[string], Row>;
  private readonly put: Database.Statement<[string, string, string, string | null, string, string | null, number]>;
  private readonly renewStmt: Database.Statement<[number, string, string, number]>;
  private readonly releaseStmt: Database.Statement<[string, string, number]>;
  private readonly sweepStmt: Database.Statement<[number]>;
  private readonly beginTx: (scope: string, claim: IdempotencyClaim, leaseMs: number) => BeginOutcome;
  private readonly completeTx: (scope: string, claim: IdempotencyClaim, response: string, ttlMs: number) => boolean;

  constructor(file: string, options: SqliteEdgeStateOptions = {}) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS idempotency (
        scope TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('running', 'done')),
        owner TEXT,
        request_id TEXT NOT NULL,
        response TEXT,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS idempotency_expiry ON idempotency (expires_at);
    `);
    this.get = this.db.prepare('SELECT fingerprint, state, owner, request_id, response, expires_at FROM idempotency WHERE scope = ?');
    this.put = this.db.prepare(
      `INSERT INTO idempotency (scope, fingerprint, state, owner, request_id, response, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(scope) DO UPDATE SET fingerprint = excluded.fingerprint, state = excluded.state, owner = excluded.owner,
         request_id = excluded.request_id, response = excluded.response, expires_at = excluded.expires_at`,
    );
    this.renewStmt = this.db.prepare(`UPDATE idempotency SET expires_at = ? WHERE scope = ? AND owner = ? AND state = 'running' AND expires_at > ?`);
    this.releaseStmt = this.db.prepare(`DELETE FROM idempotency WHERE scope = ? AND owner = ? AND state = 'running' AND expires_at > ?`);
    this.sweepStmt = this.db.prepare('DELETE FROM idempotency WHERE expires_at <= ?');

    const begin = this.db.transaction((scope: string, claim: IdempotencyClaim, leaseMs: number): BeginOutcome => {
      const now = Date.now();
      const row = this.get.get(scope);
      if (row && row.expires_at > now) {
        if (row.state === 'done') {
          return { outcome: 'done', fingerprint: row.fingerprint, requestId: row.request_id, response: deserializeResponse(row.response!) };
        }
        return { outcome: 'running', fingerprint: row.fingerprint, requestId: row.request_id };
      }
      this.put.run(scope, claim.fingerprint, 'running', claim.owner, claim.requestId, null, now + leaseMs);
      return { outcome: 'started' };
    });
    const complete = this.db.transaction((scope: string, claim: IdempotencyClaim, response: string, ttlMs: number): boolean => {
      const now = Date.now();
      const row = this.get.get(scope);
      const ours = row?.state === 'running' && row.owner === claim.owner;
      if (row && row.expires_at > now && !ours) return false;
      this.put.run(scope, claim.fingerprint, 'done', null, claim.requestId, response, now + ttlMs);
      return true;
    });
    this.beginTx = (scope, claim, leaseMs) => begin.immediate(scope, claim, leaseMs);
    this.completeTx = (scope, claim, response, ttlMs) => complete.immediate(scope, claim, response, ttlMs);
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

  async begin(scope: string, claim: IdempotencyClaim, leaseMs: number): Promise<BeginOutcome> {
    return this.beginTx(scope, claim, leaseMs);
  }

  async renew(scope: string, owner: string, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    return this.renewStmt.run(now + leaseMs, scope, owner, now).changes === 1;
  }

  async complete(scope: string, claim: IdempotencyClaim, response: StoredResponse, ttlMs: number): Promise<boolean> {
    return this.completeTx(scope, claim, serializeResponse(response), ttlMs);
  }

  async release(scope: string, owner: string): Promise<boolean> {
    return this.releaseStmt.run(scope, owner, Date.now()).changes === 1;
  }

  /** Drops expired records and windows (already invisible; this only reclaims space). */
  sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
    if (this.db.open) this.sweepStmt.run(now);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    if (this.db.open) this.db.close();
  }
}
