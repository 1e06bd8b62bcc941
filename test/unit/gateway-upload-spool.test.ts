// The gateway's upload spool (gateway/http/spool.ts; docs/edge.md "Uploads"): a spool file is removed
// however its request ends — also while its writer is still opening it or a reader still has it open —
// and a gateway starting on the directory removes what crashed processes left, never a live one's files.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readUploadOptions, UploadSpool } from '../../gateway/http/spool';

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'spool-test-'));

/** A pid no process has: above the kernel's pid_max (4194304 at most). */
const DEAD_PID = 99_999_999;

describe('UploadSpool.open: what a crash left behind', () => {
  it('removes the files of processes that no longer run and of its own pid (a restarted container), keeps a live process\'s and foreign files', async () => {
    const dir = tempDir();
    const dead = `${DEAD_PID}-${randomUUID()}`;
    const mine = `${process.pid}-${randomUUID()}`;
    const live = `${process.ppid}-${randomUUID()}`;
    for (const name of [dead, mine, live, 'README']) writeFileSync(path.join(dir, name), 'x');
    const { removed } = await UploadSpool.open(dir);
    expect(removed).toBe(2);
    expect(readdirSync(dir).sort()).toEqual([live, 'README'].sort());
  });

  it('creates the directory when it is missing', async () => {
    const dir = path.join(tempDir(), 'a', 'spool');
    await UploadSpool.open(dir);
    expect(existsSync(dir)).toBe(true);
  });
});

describe('SpoolFile.discard: removed however the request ends', () => {
  it('right after creation, before the writer has opened the file: the file never reappears', async () => {
    const dir = tempDir();
    const { spool } = await UploadSpool.open(dir);
    const file = spool.create();
    await file.discard();
    // The writer's open completed before the removal (discard waits for its close): nothing is left.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('mid-write (the writer never finished) and with a reader still open: both closed, the file removed', async () => {
    const dir = tempDir();
    const { spool } = await UploadSpool.open(dir);
    const file = spool.create();
    await new Promise<void>((resolve) => file.writer.write(Buffer.alloc(256 * 1024), () => resolve()));
    const reader = file.read(1024);
    await new Promise<void>((resolve) => reader.once('readable', () => resolve()));
    await file.discard();
    expect(readdirSync(dir)).toEqual([]);
    expect(file.writer.closed).toBe(true);
    expect(reader.closed).toBe(true);
    await file.discard(); // idempotent
  });
});

describe('readUploadOptions', () => {
  it('UPLOAD_SPOOL_DIR, else <data dir>/spool (embedded), else the temp directory (a distributed gateway); UPLOAD_TIMEOUT_MS, default 120 s', () => {
    expect(readUploadOptions({}, '/data')).toEqual({ spoolDir: '/data/spool', timeoutMs: 120_000 });
    expect(readUploadOptions({})).toEqual({ spoolDir: path.join(os.tmpdir(), 'invoicing-spool'), timeoutMs: 120_000 });
    expect(readUploadOptions({ UPLOAD_SPOOL_DIR: '/tmp/spool', UPLOAD_TIMEOUT_MS: '5000' }, '/data')).toEqual({ spoolDir: '/tmp/spool', timeoutMs: 5000 });
  });
});
