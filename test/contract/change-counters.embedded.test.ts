import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { describeChangeCountersContract } from './change-counters.contract';

const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'counters-contract-')), 'test.db');
describeChangeCountersContract('SQLite (embedded)', async () => new SqliteDocumentStore(file));
