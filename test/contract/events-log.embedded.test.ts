import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { describeEventsLogContract } from './events-log.contract';

const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'events-log-contract-')), 'test.db');
describeEventsLogContract('SQLite (embedded)', async () => new SqliteDocumentStore(file));
