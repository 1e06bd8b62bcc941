import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { describeContactsStoreContract } from './contacts-store.contract';

const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'contacts-contract-')), 'test.db');
describeContactsStoreContract('SQLite (embedded)', async () => new SqliteDocumentStore(file));
