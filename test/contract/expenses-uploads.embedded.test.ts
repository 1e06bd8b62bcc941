import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../services/shared/blobs/fs';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { describeUploadSweepContract } from './expenses-uploads.contract';

describeUploadSweepContract('SQLite and filesystem blobs (embedded)', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'expenses-uploads-contract-'));
  return { documents: new SqliteDocumentStore(path.join(dir, 'test.db')), blobs: new FsBlobStore(path.join(dir, 'blobs'), 'a-url-signing-secret-for-tests') };
});
