// `invoicing backup` / `invoicing restore` (docs/operations.md "Backup and restore"), in process, on
// DATA_DIRs written through the embedded adapters: what a backup carries and leaves out, a database
// written between two steps of its copy, and every refusal of restore — a damaged or altered backup, a
// non-empty target, a running system. The whole path under a running system's write load:
// test/system/backup-restore.test.ts.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BackupRefused, lockDataDir, RESTORE_MARKER } from '../../deploy/cli/backup/data-dir';
import { holdsFromEnv, HoldPoint } from '../../deploy/cli/backup/holds';
import { Manifest, manifestChecksum } from '../../deploy/cli/backup/manifest';
import { restoreBackup } from '../../deploy/cli/backup/restore';
import { BackupOptions, takeBackup } from '../../deploy/cli/backup/take';
import { SqliteEdgeState } from '../../gateway/edge/adapters/sqlite-edge-state';
import { FsBlobStore } from '../../services/shared/blobs/fs';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';

interface Note {
  id: number;
  version: number;
  text: string;
}
const NOTES = { name: 'notes' };

const scratch = mkdtempSync(path.join(os.tmpdir(), 'invoicing-backup-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let counter = 0;
const fresh = (label: string) => path.join(scratch, `${label}-${++counter}`);

/** A DATA_DIR as the embedded system leaves it: the store (WAL), blobs, secrets, a mail outbox, runtime state. */
async function dataDirWith(notes: number): Promise<string> {
  const dir = fresh('data');
  mkdirSync(dir);
  const store = new SqliteDocumentStore(path.join(dir, 'invoicing.db'));
  const collection = store.collection<Note>(NOTES);
  for (let i = 1; i <= notes; i++) await collection.insert({ id: i, text: `note ${i} ${'x'.repeat(200)}` });
  await store.close();
  const blobs = new FsBlobStore(path.join(dir, 'blobs'), 's'.repeat(32));
  await blobs.put('logos/1/abc.png', Buffer.from('png bytes'), 'image/png');
  await blobs.put('expenses/1/live/f1', Buffer.from('%PDF-1.7 expense'), 'application/octet-stream');
  writeFileSync(path.join(dir, 'blobs', 'expenses', '1', 'live', 'f2.1a2b.tmp'), 'half an upload');
  writeFileSync(path.join(dir, 'secrets.json'), JSON.stringify({ jwtSecret: 'j'.repeat(43) }), { mode: 0o600 });
  mkdirSync(path.join(dir, 'outbox'));
  writeFileSync(path.join(dir, 'outbox', 'd1.eml'), 'Subject: invoice\r\n\r\nhello');
  mkdirSync(path.join(dir, 'spool'));
  writeFileSync(path.join(dir, 'spool', 'upload-1'), 'in flight');
  mkdirSync(path.join(dir, 'grpc'));
  writeFileSync(path.join(dir, 'runtime.json'), JSON.stringify({ pid: 999_999_999, engines: { store: 'sqlite', blobs: 'fs', edge: 'sqlite' } }));
  const edge = new SqliteEdgeState(path.join(dir, 'edge.db'));
  await edge.close();
  return dir;
}

const quiet = () => undefined;
const backup = (dataDir: string, to: string, extra: Partial<BackupOptions> = {}) =>
  takeBackup({ dataDir, to, pagesPerStep: 1000, appVersion: '0.0.0-test', progress: quiet, ...extra });
const restore = (from: string, dataDir: string, force = false) => restoreBackup({ from, dataDir, force, progress: quiet });

async function refusal(promise: Promise<unknown>): Promise<BackupRefused> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof BackupRefused)) throw new Error(`expected a refusal, got ${err instanceof Error ? err.stack : String(err)}`);
  return err;
}

const manifestOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
const writeManifest = (dir: string, manifest: Manifest, rechecksum = true) =>
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(rechecksum ? { ...manifest, checksum: manifestChecksum(manifest) } : manifest));

async function notesIn(dataDir: string): Promise<string[]> {
  const store = new SqliteDocumentStore(path.join(dataDir, 'invoicing.db'));
  try {
    return (await store.collection<Note>(NOTES).list({ where: {}, limit: 10_000 })).map((n) => n.text.split(' ').slice(0, 2).join(' '));
  } finally {
    await store.close();
  }
}

describe('invoicing backup: what a backup carries', () => {
  let dataDir: string;
  let to: string;
  let manifest: Manifest;

  beforeAll(async () => {
    dataDir = await dataDirWith(20);
    to = fresh('backup');
    // As while the system runs: its edge state open, with a write in its WAL.
    const running = new SqliteEdgeState(path.join(dataDir, 'edge.db'));
    try {
      await running.begin('scope', { fingerprint: 'f', owner: 'o', requestId: 'r' }, 5000);
      expect(existsSync(path.join(dataDir, 'edge.db-wal'))).toBe(true);
      await backup(dataDir, to);
    } finally {
      await running.close();
    }
    manifest = manifestOf(to);
  });

  it('every database (online backup), every blob with its content type, the secrets and the mail outbox, each with size and SHA-256', () => {
    expect(manifest.files.map((f) => [f.path, f.kind])).toEqual([
      ['invoicing.db', 'sqlite'],
      ['blobs/expenses/1/live/f1', 'file'],
      ['blobs/expenses/1/live/f1.type', 'file'],
      ['blobs/logos/1/abc.png', 'file'],
      ['blobs/logos/1/abc.png.type', 'file'],
      ['outbox/d1.eml', 'file'],
      ['secrets.json', 'file'],
    ]);
    for (const file of manifest.files) expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest).toMatchObject({ format: 'invoicing-backup/1', app_version: '0.0.0-test', source: dataDir });
  });

  it("leaves out the running process's state, the edge's replay cache, partial writes and the databases' WAL files", () => {
    expect(manifest.left_out.map((l) => l.path)).toEqual(['edge.db', 'grpc', 'runtime.json', 'spool']);
    expect(manifest.left_out.find((l) => l.path === 'edge.db')?.why).toMatch(/replay/);
    const carried = manifest.files.map((f) => f.path);
    for (const absent of ['invoicing.db-wal', 'invoicing.db-shm', 'edge.db-wal', 'blobs/expenses/1/live/f2.1a2b.tmp']) expect(carried).not.toContain(absent);
  });

  it('the database copy is whole and stands alone (no write-ahead log beside it)', async () => {
    expect(readdirSync(path.join(to, 'data')).sort()).toEqual(['blobs', 'invoicing.db', 'outbox', 'secrets.json']);
    const copy = new Database(path.join(to, 'data', 'invoicing.db'), { readonly: true });
    expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(copy.prepare('SELECT count(*) FROM c_notes').pluck().get()).toBe(20);
    copy.close();
  });

  it('leaves no half-written backup behind: only the directory named --to', () => {
    expect(readdirSync(path.dirname(to)).filter((name) => name.startsWith(`${path.basename(to)}.partial`))).toEqual([]);
  });
});

describe('invoicing backup: a database written between two steps of its copy', () => {
  it('restarts the copy and takes the rest in one step: the backup holds the database as of one moment, writes included', async () => {
    const dataDir = await dataDirWith(200);
    const lines: string[] = [];
    const writer = new Database(path.join(dataDir, 'invoicing.db'));
    const insert = writer.prepare("INSERT INTO c_notes (id, version, doc) VALUES (?, 1, json_object('id', ?, 'version', 1, 'text', ?))");
    // The hold runs the other connection's writes exactly between the first and the second step (once,
    // as the CLI's holds do).
    let written = false;
    const hold = (point: HoldPoint) => {
      if (point !== 'database-step' || written) return;
      written = true;
      for (let id = 201; id <= 210; id++) insert.run(id, id, `note ${id}`);
    };
    const to = fresh('backup');
    await backup(dataDir, to, { pagesPerStep: 1, hold, progress: (line) => lines.push(line) });
    writer.close();
    expect(lines).toContain('invoicing.db: changed during the copy; copying the rest in one step');
    const copy = new Database(path.join(to, 'data', 'invoicing.db'), { readonly: true });
    expect(copy.prepare('SELECT count(*) FROM c_notes').pluck().get()).toBe(210);
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    copy.close();
  });
});

describe('invoicing backup: what it refuses', () => {
  it('a directory without an embedded database, naming the distributed mode\'s tools', async () => {
    const empty = fresh('empty');
    mkdirSync(empty);
    const err = await refusal(backup(empty, fresh('backup')));
    expect(err.code).toBe('not_embedded_data_dir');
    expect(err.message).toMatch(/mongodump.*mc mirror/);
  });

  it('a system that keeps its documents or files outside DATA_DIR (MONGO_URL, MINIO_ENDPOINT)', async () => {
    const dataDir = await dataDirWith(1);
    writeFileSync(path.join(dataDir, 'runtime.json'), JSON.stringify({ pid: 1, engines: { store: 'sqlite', blobs: 'minio', edge: 'sqlite' } }));
    const err = await refusal(backup(dataDir, fresh('backup')));
    expect(err).toMatchObject({ code: 'not_embedded_data_dir', message: expect.stringMatching(/files in minio/) });
  });

  it('a --to that is not empty, or inside DATA_DIR', async () => {
    const dataDir = await dataDirWith(1);
    const used = fresh('used');
    mkdirSync(used);
    writeFileSync(path.join(used, 'keep.txt'), 'mine');
    expect((await refusal(backup(dataDir, used))).code).toBe('backup_target_not_empty');
    expect(readFileSync(path.join(used, 'keep.txt'), 'utf8')).toBe('mine');
    expect((await refusal(backup(dataDir, path.join(dataDir, 'backups', 'one')))).code).toBe('backup_inside_data_dir');
  });

  it('a DATA_DIR being restored (or whose restore was interrupted)', async () => {
    const dataDir = await dataDirWith(1);
    writeFileSync(path.join(dataDir, RESTORE_MARKER), 'earlier');
    expect((await refusal(backup(dataDir, fresh('backup')))).code).toBe('restore_in_progress');
  });

  it('its test holds in production', () => {
    expect(() => holdsFromEnv({ INVOICING_BACKUP_TEST_HOLD_DIR: scratch, NODE_ENV: 'production' })).toThrow(BackupRefused);
  });
});

describe('invoicing restore: a verified backup into an empty DATA_DIR', () => {
  it('restores every file as it was backed up; the store and the blobs read back', async () => {
    const dataDir = await dataDirWith(20);
    const to = fresh('backup');
    await backup(dataDir, to);
    const target = fresh('restored');
    const summary = await restore(to, target);
    expect(summary).toMatchObject({ data_dir: target, files: 7, app_version: '0.0.0-test' });
    expect(await notesIn(target)).toHaveLength(20);
    const blob = await new FsBlobStore(path.join(target, 'blobs'), 's'.repeat(32)).get('expenses/1/live/f1');
    expect(blob).toEqual({ data: Buffer.from('%PDF-1.7 expense'), contentType: 'application/octet-stream' });
    expect(readFileSync(path.join(target, 'secrets.json'), 'utf8')).toBe(readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
    expect(existsSync(path.join(target, RESTORE_MARKER))).toBe(false);
    expect(existsSync(path.join(target, 'spool'))).toBe(false);
  });
});

describe('invoicing restore: a damaged or altered backup is refused before anything is written', () => {
  let original: string;
  beforeAll(async () => {
    original = fresh('backup');
    await backup(await dataDirWith(5), original);
  });

  /** A copy of the good backup, changed by `alter`. */
  function altered(alter: (dir: string, manifest: Manifest) => void): string {
    const dir = fresh('altered');
    mkdirSync(dir);
    for (const entry of readdirSync(original, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const from = path.join(entry.parentPath, entry.name);
      const into = path.join(dir, path.relative(original, from));
      mkdirSync(path.dirname(into), { recursive: true });
      writeFileSync(into, readFileSync(from));
    }
    alter(dir, manifestOf(dir));
    return dir;
  }

  const cases: Array<[string, (dir: string, manifest: Manifest) => void, string, RegExp]> = [
    ['a changed file', (dir) => appendFileSync(path.join(dir, 'data', 'blobs', 'logos', '1', 'abc.png'), '!'), 'backup_damaged', /blobs\/logos\/1\/abc\.png does not match its checksum/],
    ['a missing file', (dir) => rmSync(path.join(dir, 'data', 'outbox', 'd1.eml')), 'backup_damaged', /outbox\/d1\.eml is missing/],
    ['a file the manifest does not list', (dir) => writeFileSync(path.join(dir, 'data', 'blobs', 'planted'), 'x'), 'backup_damaged', /blobs\/planted not in manifest\.json/],
    ['a manifest edited without its checksum', (dir, m) => writeManifest(dir, { ...m, files: m.files.slice(1) }, false), 'backup_damaged', /manifest\.json does not match its checksum/],
    [
      'a manifest whose entry escapes the data directory',
      (dir, m) => writeManifest(dir, { ...m, files: [...m.files, { ...m.files[1], path: '../../escaped' }] }),
      'backup_damaged',
      /invalid entry/,
    ],
    ['a manifest that is not JSON', (dir) => writeFileSync(path.join(dir, 'manifest.json'), '{"format":'), 'backup_damaged', /not valid JSON/],
    ['a format this version does not know', (dir, m) => writeManifest(dir, { ...m, format: 'invoicing-backup/9' as Manifest['format'] }), 'backup_format_unknown', /invoicing-backup\/9/],
    ['a directory without a manifest', (dir) => rmSync(path.join(dir, 'manifest.json')), 'not_a_backup', /has no manifest\.json/],
    [
      'a database that fails SQLite\'s integrity check (its checksum recomputed)',
      (dir, m) => {
        const file = path.join(dir, 'data', 'invoicing.db');
        const bytes = readFileSync(file);
        bytes.fill(0xff, 4096, 4096 + 64); // the second page's header: not a b-tree page any more
        writeFileSync(file, bytes);
        const sha256 = require('node:crypto').createHash('sha256').update(bytes).digest('hex') as string;
        writeManifest(dir, { ...m, files: m.files.map((f) => (f.path === 'invoicing.db' ? { ...f, sha256 } : f)) });
      },
      'backup_damaged',
      /invoicing\.db fails SQLite's integrity check/,
    ],
  ];

  it.each(cases)('%s', async (_name, alter, code, message) => {
    const target = fresh('target');
    const err = await refusal(restore(altered(alter), target));
    expect(err.code).toBe(code);
    expect(err.message).toMatch(message);
    expect(existsSync(target)).toBe(false);
  });
});

describe('invoicing restore: the target', () => {
  let from: string;
  beforeAll(async () => {
    from = fresh('backup');
    await backup(await dataDirWith(3), from);
  });

  it('a non-empty DATA_DIR is refused without --force, and left as it was', async () => {
    const target = await dataDirWith(9);
    const err = await refusal(restore(from, target));
    expect(err).toMatchObject({ code: 'data_dir_not_empty', message: expect.stringMatching(/--force/) });
    expect(await notesIn(target)).toHaveLength(9);
  });

  it('with --force its data is replaced: old files gone, no stale WAL, the edge replay records emptied', async () => {
    const target = await dataDirWith(9);
    writeFileSync(path.join(target, 'invoicing.db-wal'), 'a stale write-ahead log of the replaced database');
    writeFileSync(path.join(target, 'blobs', 'only-in-old'), 'x');
    const edge = new Database(path.join(target, 'edge.db'));
    edge.exec('CREATE TABLE IF NOT EXISTS leftover (k TEXT); INSERT INTO leftover VALUES (1)');
    edge.close();
    await restore(from, target, true);
    expect(await notesIn(target)).toHaveLength(3);
    expect(existsSync(path.join(target, 'blobs', 'only-in-old'))).toBe(false);
    const after = new Database(path.join(target, 'edge.db'), { readonly: true });
    expect(after.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get()).toBe(0);
    after.close();
  });

  it('a DATA_DIR a system runs on is refused: its edge.db lock is held', async () => {
    const target = fresh('running');
    mkdirSync(target);
    const running = new SqliteEdgeState(path.join(target, 'edge.db'));
    try {
      const err = await refusal(restore(from, target, true));
      expect(err).toMatchObject({ code: 'system_running', message: expect.stringMatching(/stop it first/) });
    } finally {
      await running.close();
    }
    expect(await restore(from, target, true)).toMatchObject({ files: 7 });
  });

  it('a DATA_DIR whose runtime.json names a live process is refused (a system with its edge state in Redis holds no edge.db)', async () => {
    const target = fresh('running-redis');
    mkdirSync(target);
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      writeFileSync(path.join(target, 'runtime.json'), JSON.stringify({ pid: child.pid }));
      expect((await refusal(restore(from, target, true))).code).toBe('system_running');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('while a restore runs, no system can take the DATA_DIR (the lock is the one the system takes)', async () => {
    const target = fresh('locked');
    mkdirSync(target);
    const lock = lockDataDir(target);
    try {
      expect(() => new SqliteEdgeState(path.join(target, 'edge.db'))).toThrow(/in use by another process/);
    } finally {
      lock.release();
    }
  });

  it('an interrupted restore is finished only with --force', async () => {
    const target = fresh('interrupted');
    mkdirSync(target);
    writeFileSync(path.join(target, RESTORE_MARKER), 'earlier');
    expect((await refusal(restore(from, target))).message).toMatch(/interrupted restore/);
    await restore(from, target, true);
    expect(existsSync(path.join(target, RESTORE_MARKER))).toBe(false);
  });
});
