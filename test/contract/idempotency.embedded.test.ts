import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { describeIdempotencyContract } from './idempotency.contract';

const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'idempotency-contract-')), 'test.db');
describeIdempotencyContract('SQLite (embedded)', async () => new SqliteDocumentStore(file));
