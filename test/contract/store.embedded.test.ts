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
