import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { describeStoreContract } from './store.contract';

const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'store-contract-')), 'test.db');
describeStoreContract('SQLite (embedded)', {
  open: async () => new SqliteDocumentStore(file),
  reopen: async () => new SqliteDocumentStore(file),
});

// The adapter answers a search by a bounded scan first and the trigram index after it; the contract again
// with the scan turned off runs every search through the index.
const indexOnly = path.join(mkdtempSync(path.join(os.tmpdir(), 'store-contract-')), 'test.db');
describeStoreContract('SQLite (embedded), searches through the trigram index only', {
  open: async () => new SqliteDocumentStore(indexOnly, { searchScanRows: 0 }),
  reopen: async () => new SqliteDocumentStore(indexOnly, { searchScanRows: 0 }),
});

// An ordered search sorts the index's matches when they are few, else walks the list order keeping
// matches: the contract again with no matches counted as few runs every ordered search the second way.
const walking = path.join(mkdtempSync(path.join(os.tmpdir(), 'store-contract-')), 'test.db');
describeStoreContract('SQLite (embedded), ordered searches walking the list order', {
  open: async () => new SqliteDocumentStore(walking, { searchScanRows: 0, sortedCandidates: 0 }),
  reopen: async () => new SqliteDocumentStore(walking, { searchScanRows: 0, sortedCandidates: 0 }),
});

// The adapter writes a LIMIT into the SQL text instead of binding it (SQLite prepares a statement again
// whenever a bound LIMIT is rebound): statements are cached per text, so each limit has its own.
describe('SQLite (embedded): limits written into the statement', () => {
  const own = path.join(mkdtempSync(path.join(os.tmpdir(), 'store-limits-')), 'test.db');
  let store: SqliteDocumentStore;
  beforeAll(() => {
    store = new SqliteDocumentStore(own);
  });
  afterAll(() => store.close());

  it('answers each limit with its own statement, the same query shape alternating limits', async () => {
    const things = store.collection<{ id: number; version: number; kind: string; name: string }>({ name: 'limited', indexes: [['kind']], searchField: 'name' });
    for (let id = 1; id <= 5; id++) await things.insert({ id, kind: 'a', name: `thing ${id}` });
    const sizes = [];
    for (const limit of [1, 3, 1, 5, 2]) sizes.push((await things.list({ where: { kind: 'a' }, limit })).length);
    expect(sizes).toEqual([1, 3, 1, 5, 2]);
    const found = [];
    for (const limit of [2, 4]) found.push((await things.list({ where: { kind: 'a' }, limit, contains: { field: 'name', text: 'thing' } })).map((t) => t.id));
    expect(found).toEqual([[5, 4], [5, 4, 3, 2]]);
  });

  it('refuses a limit that is not an integer (it becomes SQL text)', async () => {
    const things = store.collection<{ id: number; version: number; kind: string }>({ name: 'limited_refused' });
    await expect(things.list({ where: {}, limit: 1.5 })).rejects.toThrow(/invalid limit/);
    await expect(things.list({ where: {}, limit: Number.NaN })).rejects.toThrow(/invalid limit/);
  });
});
