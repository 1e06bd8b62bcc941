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
