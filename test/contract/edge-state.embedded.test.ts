// The edge-state contract against the embedded adapter: SQLite records (one file; handles in one
// process share its connection) and in-memory counters. Then what only the embedded adapter promises:
// the file belongs to one process, it survives closing every handle, and sweeps reclaim expired rows.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEdgeState } from '../../gateway/edge/adapters/sqlite-edge-state';
import { IdempotencyClaim } from '../../gateway/edge/ports/edge-state';
import { edgeStateContract } from './edge-state.contract';

const freshFile = () => path.join(mkdtempSync(path.join(os.tmpdir(), 'edge-state-')), 'edge.db');
const file = freshFile();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const claim = (n: number): IdempotencyClaim => ({ fingerprint: `fp-${n}`, owner: `owner-${n}`, requestId: `req_${n}` });
const response = { status: 201, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') };
/** The scopes of the rows in the file, in insertion order (read once no handle holds its lock). */
const rows = (own: string) => {
  const db = new Database(own, { readonly: true });
  try {
    return (db.prepare('SELECT scope FROM idempotency_records ORDER BY rowid').all() as Array<{ scope: string }>).map((r) => r.scope);
  } finally {
    db.close();
  }
};

describe('SqliteEdgeState', () => {
  edgeStateContract({ open: async () => new SqliteEdgeState(file), sharedCounters: false });
});

describe('SqliteEdgeState: one process per file', () => {
  it('another process cannot open the file while one holds it (a second embedded system is refused)', async () => {
    const own = freshFile();
    const state = new SqliteEdgeState(own);
    try {
      const script = `const D = require('better-sqlite3'); const db = new D(${JSON.stringify(own)}, { timeout: 0 }); db.prepare('SELECT count(*) FROM idempotency_records').get();`;
      expect(() => execFileSync(process.execPath, ['-e', script], { cwd: process.cwd(), stdio: 'pipe' })).toThrow(/locked|busy/i);
    } finally {
      await state.close();
    }
  });

  it('keeps records once every handle is closed and the file is opened again', async () => {
    const own = freshFile();
    const first = new SqliteEdgeState(own);
    await first.begin('kept', claim(1), 10_000);
    await first.complete('kept', claim(1), response, 60_000);
    await first.close();
    const again = new SqliteEdgeState(own);
    try {
      const replay = await again.begin('kept', claim(2), 10_000);
      expect(replay.outcome === 'done' && replay.requestId).toBe('req_1');
    } finally {
      await again.close();
    }
  });
});

describe('SqliteEdgeState: markers of a dead process', () => {
  it('drops in-progress markers when the file is opened (the lock proves their owner died), keeps completed records', async () => {
    const own = freshFile();
    const first = new SqliteEdgeState(own);
    await first.begin('kept', claim(1), 10_000);
    await first.complete('kept', claim(1), response, 60_000);
    await first.begin('orphan', claim(2), 10_000);
    await first.close(); // as a killed process leaves the file: the marker's lease still runs
    const again = new SqliteEdgeState(own);
    try {
      expect((await again.begin('orphan', claim(3), 10_000)).outcome).toBe('started');
      expect((await again.begin('kept', claim(4), 10_000)).outcome).toBe('done');
    } finally {
      await again.close();
    }
  });

  it('keeps in-progress markers out of the file: a begin writes nothing, only complete commits', async () => {
    const own = freshFile();
    const state = new SqliteEdgeState(own);
    try {
      await state.begin('running', claim(1), 10_000);
      await state.begin('done', claim(2), 10_000);
      await state.complete('done', claim(2), response, 60_000);
    } finally {
      await state.close(); // the file is locked while a handle is open: read it afterwards
    }
    expect(rows(own)).toEqual(['done']);
  });

  it('drops a marker row an earlier version left in the file (markers were rows then)', async () => {
    const own = freshFile();
    await new SqliteEdgeState(own).close(); // creates the table
    const db = new Database(own);
    db.prepare(
      `INSERT INTO idempotency_records (scope, fingerprint, state, owner, request_id, expires_at) VALUES ('orphan', 'fp-1', 'running', 'owner-1', 'req_1', ?)`,
    ).run(Date.now() + 60_000);
    db.close();
    const state = new SqliteEdgeState(own);
    try {
      expect((await state.begin('orphan', claim(2), 10_000)).outcome).toBe('started');
    } finally {
      await state.close();
    }
  });

  it('a second handle in the same process keeps the first handle’s live markers', async () => {
    const own = freshFile();
    const first = new SqliteEdgeState(own);
    await first.begin('live', claim(1), 10_000);
    const second = new SqliteEdgeState(own);
    try {
      expect((await second.begin('live', claim(2), 10_000)).outcome).toBe('running');
    } finally {
      await second.close();
      await first.close();
    }
  });
});

describe('SqliteEdgeState: sweeping', () => {

  it('deletes the expired records from the oldest on, in batches, and keeps every live one', async () => {
    const own = freshFile();
    const state = new SqliteEdgeState(own);
    const kept = async (scope: string, n: number, ttlMs: number) => {
      await state.begin(scope, claim(n), 10_000);
      await state.complete(scope, claim(n), response, ttlMs);
    };
    for (let i = 0; i < 1200; i++) await kept(`old-${i}`, i, 50); // more than two sweep batches
    await sleep(80);
    await kept('live', -1, 60_000);
    await kept('late-expiring', -2, 50);
    await sleep(80);
    state.sweep();
    await state.close();
    // The expired record behind a live one waits until the live one expires (it is invisible meanwhile).
    expect(rows(own)).toEqual(['live', 'late-expiring']);
  });

  it('an expired record is invisible before any sweep: its key starts afresh', async () => {
    const own = freshFile();
    const state = new SqliteEdgeState(own);
    try {
      await state.begin('k', claim(1), 50);
      await sleep(80);
      expect((await state.begin('k', claim(2), 10_000)).outcome).toBe('started');
    } finally {
      await state.close();
    }
  });
});
