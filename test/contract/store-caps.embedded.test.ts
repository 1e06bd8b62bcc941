import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { describeCapContract } from './store-caps.contract';

const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'caps-contract-')), 'test.db');
describeCapContract('SQLite (embedded)', async () => new SqliteDocumentStore(file));
