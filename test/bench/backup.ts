// `npm run bench:backup`: `invoicing backup` of a large embedded DATA_DIR while another process writes
// to it, then `invoicing restore` and a consistency check (docs/operations.md "Backup and restore").
//
// Seeds BENCH_BACKUP_DOCS documents (default 200,000, about 1 KB each, in bulk through the store port)
// and BENCH_BACKUP_FILES blob files (default 2,000 of 20 KB) into a fresh DATA_DIR; starts a writer
// process inserting one document per transaction, BENCH_BACKUP_WRITES_PER_S a second (default 500), on its own connection (each write
// restarts a step-by-step online backup: the case the backup must survive); runs the backup with its
// default step, then restores it and checks: SQLite's integrity check, the restored count between the
// count before the backup started and after it ended, every file present with its checksum (restore
// verifies them). Reports the backup's and the restore's wall time, MB/s, and the writer's commits
// during the backup. Figures, not targets: nothing here fails on a duration.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { restoreBackup } from '../../deploy/cli/backup/restore';
import { takeBackup } from '../../deploy/cli/backup/take';
import { FsBlobStore } from '../../services/shared/blobs/fs';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';

const DOCS = Number(process.env.BENCH_BACKUP_DOCS ?? 200_000);
const FILES = Number(process.env.BENCH_BACKUP_FILES ?? 2_000);
const WRITES_PER_S = Number(process.env.BENCH_BACKUP_WRITES_PER_S ?? 500);
const BATCH = 5_000;

interface BenchDoc {
  id: number;
  version: number;
  account_id: number;
  name: string;
  note: string;
}

const count = (dataDir: string) => {
  const db = new Database(path.join(dataDir, 'invoicing.db'), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM c_bench_docs').pluck().get() as number;
  } finally {
    db.close();
  }
};

/** A process inserting documents one transaction each until stopped; prints its commit count on SIGTERM. */
function startWriter(dataDir: string) {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(${JSON.stringify(path.join(dataDir, 'invoicing.db'))}, { timeout: 5000 });
    db.pragma('journal_mode = WAL');
    const insert = db.prepare("INSERT INTO c_bench_docs (id, version, doc) VALUES (?, 1, json_object('id', ?, 'version', 1, 'name', 'written during the backup'))");
    let id = ${DOCS + 1}, commits = 0;
    process.on('SIGTERM', () => { process.stdout.write(String(commits)); process.exit(0); });
    // Paced: ${WRITES_PER_S} commits a second, in bursts every 20 ms.
    const perTick = Math.max(1, Math.round(${WRITES_PER_S} / 50));
    const step = () => { for (let i = 0; i < perTick; i++) { insert.run(id, id); id++; commits++; } setTimeout(step, 20); };
    process.stdout.write('started\\n');
    step();
  `;
  const child = spawn(process.execPath, ['-e', script], { cwd: path.resolve(__dirname, '../..'), stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const started = new Promise<void>((resolve) => child.stdout.on('data', () => out.includes('started') && resolve()));
  return {
    started,
    stop: () =>
      new Promise<number>((resolve) => {
        child.once('exit', () => resolve(Number(out.replace('started\n', '')) || 0));
        child.kill('SIGTERM');
      }),
  };
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'invoicing-bench-backup-'));
  const dataDir = path.join(scratch, 'data');
  mkdirSync(dataDir);
  try {
    const seedStart = Date.now();
    const store = new SqliteDocumentStore(path.join(dataDir, 'invoicing.db'));
    const docs = store.collection<BenchDoc>({ name: 'bench_docs', indexes: [['account_id']] });
    for (let from = 1; from <= DOCS; from += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, DOCS - from + 1) }, (_, i) => ({
        id: from + i,
        account_id: (from + i) % 1000,
        name: `Contact ${from + i}`,
        note: randomBytes(450).toString('hex'),
      }));
      await docs.insertMany(batch);
    }
    await store.close();
    const blobs = new FsBlobStore(path.join(dataDir, 'blobs'), 'b'.repeat(32));
    for (let i = 0; i < FILES; i++) await blobs.put(`expenses/1/live/${randomBytes(8).toString('hex')}`, randomBytes(20_000), 'application/pdf');
    const dbBytes = statSync(path.join(dataDir, 'invoicing.db')).size;
    process.stderr.write(`seeded ${DOCS} documents (${(dbBytes / 1e6).toFixed(0)} MB) and ${FILES} files in ${((Date.now() - seedStart) / 1000).toFixed(1)} s\n`);

    const writer = startWriter(dataDir);
    await writer.started;
    const before = count(dataDir);
    const progress: string[] = [];
    const backupStart = Date.now();
    const summary = await takeBackup({ dataDir, to: path.join(scratch, 'backup'), pagesPerStep: 1000, appVersion: 'bench', progress: (line) => progress.push(line) });
    const backupMs = Date.now() - backupStart;
    const after = count(dataDir);
    const commits = await writer.stop();

    const restoreStart = Date.now();
    const restored = path.join(scratch, 'restored');
    await restoreBackup({ from: path.join(scratch, 'backup'), dataDir: restored, force: false, progress: () => undefined });
    const restoreMs = Date.now() - restoreStart;
    const restoredCount = count(restored);
    const check = new Database(path.join(restored, 'invoicing.db'), { readonly: true });
    const integrity = check.pragma('integrity_check', { simple: true });
    check.close();

    const consistent = restoredCount >= before && restoredCount <= after && integrity === 'ok';
    const report = {
      documents: DOCS,
      files: FILES,
      database_mb: Math.round(dbBytes / 1e6),
      backup_s: backupMs / 1000,
      backup_mb_per_s: Math.round(summary.bytes / 1e6 / (backupMs / 1000)),
      restarted_then_one_step: progress.some((line) => line.includes('changed during the copy')),
      writer_commits_while_backing_up: commits,
      restore_s: restoreMs / 1000,
      count_before: before,
      count_restored: restoredCount,
      count_after: after,
      integrity,
      consistent,
    };
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');
    if (!consistent) process.exitCode = 1;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
