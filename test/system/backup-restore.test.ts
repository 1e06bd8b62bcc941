// `invoicing backup` of a running embedded system under write load, `invoicing restore` into a fresh
// DATA_DIR, and the restored system started there (docs/operations.md "Backup and restore"). Writers
// create contacts, create and issue invoices and upload expenses the whole time; the backup's test holds
// (INVOICING_BACKUP_TEST_HOLD_DIR) place writes of every kind between two steps of the database copy and
// between the databases and the files, so the interleaving is the same on every run. The restored system
// must be consistent: invoice numbers gapless, every listed resource readable, every referenced file
// downloadable with its bytes, and the counts between what existed before the backup started and after
// it ended. Embedded only: the distributed mode's data lives in its engines, and backup refuses it
// (test/unit/cli-backup.test.ts "what it refuses").
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, watch, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Api } from '../support/api';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { pdfFile } from '../support/expense-files';
import { withoutEngines } from '../support/real-engines';
import { dist, Proc, startProcess, startSystem, System } from '../support/system';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'invoicing-backup-'));
const year = new Date().getUTCFullYear();
let system: System;
let ws: DocsWorkspace;

/** What the writers did, by kind: ids whose create answered, and requests still running. */
interface Written {
  contacts: Set<number>;
  invoices: Set<number>;
  expenses: Map<number, Buffer>;
}
type Kind = keyof Written;
const KINDS: Kind[] = ['contacts', 'invoices', 'expenses'];

/** Concurrent writers, one per kind, until stopped; `after(n)` resolves once every kind completed n more writes. */
function startWriters(on: DocsWorkspace) {
  const written: Written = { contacts: new Set(), invoices: new Set(), expenses: new Map() };
  const done: Record<Kind, number> = { contacts: 0, invoices: 0, expenses: 0 };
  const waiters: Array<{ target: Record<Kind, number>; resolve: () => void }> = [];
  let stopped = false;
  const settle = () => {
    for (const waiter of [...waiters]) {
      if (KINDS.every((kind) => done[kind] >= waiter.target[kind])) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  const steps: Record<Kind, () => Promise<void>> = {
    contacts: async () => {
      const name = `Load ${randomBytes(3).toString('hex')}`;
      const res = await on.api.post(`${on.base}/contacts`, { name, invoice_account: { name } });
      if (res.status !== 201) throw new Error(`contact: ${res.status} ${res.text}`);
      written.contacts.add(res.body.id);
    },
    invoices: async () => {
      const draft = await on.api.post(`${on.base}/invoices`, { purchaser_id: on.purchaser, line_items: [line('250')] });
      if (draft.status !== 201) throw new Error(`invoice: ${draft.status} ${draft.text}`);
      const issued = await on.api.post(`${on.base}/invoices/${draft.body.id}/issue`);
      if (issued.status !== 200) throw new Error(`issue: ${issued.status} ${issued.text}`);
      written.invoices.add(draft.body.id);
    },
    expenses: async () => {
      const file = await pdfFile(`Receipt ${randomBytes(4).toString('hex')}`);
      const form = new FormData();
      form.append('file', new Blob([file], { type: 'application/pdf' }), 'receipt.pdf');
      const res = await on.api.request('POST', `${on.base}/expenses/upload`, { rawBody: form });
      if (res.status !== 201) throw new Error(`upload: ${res.status} ${res.text}`);
      written.expenses.set(res.body.id, file);
    },
  };
  const loops = KINDS.map(async (kind) => {
    try {
      while (!stopped) {
        await steps[kind]();
        done[kind] += 1;
        settle();
      }
    } finally {
      stopped = true; // one writer failing stops the others: nothing runs on after the test
    }
  });
  const failed = Promise.all(loops).then(() => undefined);
  return {
    written,
    /** Resolves once every kind has completed `n` more writes than now (fails if a writer fails). */
    after: (n: number) =>
      Promise.race([
        new Promise<void>((resolve) => {
          waiters.push({ target: { contacts: done.contacts + n, invoices: done.invoices + n, expenses: done.expenses + n }, resolve });
          settle();
        }),
        failed.then(() => {
          throw new Error('the writers stopped');
        }),
      ]),
    /** Stops the loops after their current request; resolves when every request has answered. */
    stop: async () => {
      stopped = true;
      await failed;
    },
  };
}

/** Resolves when `file` exists (the backup reached a hold), watching its directory instead of sleeping. */
function appears(file: string, backup: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const watcher = watch(path.dirname(file), () => {
      if (existsSync(file)) finish();
    });
    const exited = (code: number | null) => finish(new Error(`the backup exited (${code}) before ${path.basename(file)}`));
    const finish = (err?: Error) => {
      watcher.close();
      backup.off('exit', exited);
      if (err) reject(err);
      else resolve();
    };
    backup.once('exit', exited);
    if (existsSync(file)) finish();
  });
}

function runCli(args: string[], env: Record<string, string> = {}): { child: ChildProcess; result: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, [dist('deploy/cli/main.js'), ...args], { env: { ...withoutEngines(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, result: new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr }))) };
}

/** Every item of a list endpoint, page by page. */
async function listAll(api: Api, url: string): Promise<Array<{ id: number } & Record<string, any>>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const items = [];
  let cursor: string | null = null;
  do {
    const res = await api.get(`${url}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.text}`);
    items.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor);
  return items;
}

const ids = (items: Array<{ id: number }>) => new Set(items.map((i) => i.id));
const subset = (a: Set<number>, b: Set<number>) => [...a].filter((x) => !b.has(x));

afterAll(async () => {
  await system?.stop();
});

describe('invoicing backup of a running system under write load, restored into a fresh DATA_DIR', () => {
  const backupDir = path.join(scratch, 'backup');
  const holdDir = path.join(scratch, 'holds');
  const restoredDir = path.join(scratch, 'restored');
  const logo = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]);
  let before: { contacts: Set<number>; invoices: Set<number>; expenses: Set<number> };
  let after: { contacts: Set<number>; invoices: Set<number>; expenses: Set<number> };
  let uploaded: Map<number, Buffer>;
  let pdfBefore: { id: number; bytes: Buffer };
  let backupOutput: { code: number | null; stdout: string; stderr: string };
  let restored: Proc;
  let api: Api;

  const snapshot = async (on: Api) => ({
    contacts: ids(await listAll(on, `${ws.base}/contacts`)),
    invoices: ids(await listAll(on, `${ws.base}/invoices`)),
    expenses: ids(await listAll(on, `${ws.base}/expenses`)),
  });

  beforeAll(async () => {
    system = await startSystem({ mode: 'embedded' });
    ws = await docsWorkspace(system);
    // Uploads stored without an extraction job: the test is about files and records, not OCR.
    await system.cli('plan', 'set', '--workspace', String(ws.id), '--quota', 'ai_expense_extractions=0');
    const logoFile = path.join(scratch, 'logo.png');
    writeFileSync(logoFile, logo);
    await system.cli('workspace', 'set-logo', '--workspace', String(ws.id), '--file', logoFile);
    // One rendered PDF in the blobs before the backup.
    const draft = await ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] });
    await ws.api.post(`${ws.base}/invoices/${draft.body.id}/issue`);
    const pdf = await ws.api.get(`${ws.base}/invoices/${draft.body.id}/pdf`);
    expect(pdf.status).toBe(200);
    pdfBefore = { id: draft.body.id, bytes: pdf.bytes };

    const writers = startWriters(ws);
    await writers.after(1);
    before = await snapshot(ws.api);

    mkdirSync(holdDir);
    const backup = runCli(['backup', '--data-dir', system.dataDir, '--to', backupDir, '--pages-per-step', '1'], { INVOICING_BACKUP_TEST_HOLD_DIR: holdDir, NODE_ENV: 'test' });
    // Writes of every kind between two steps of the database copy…
    await appears(path.join(holdDir, 'database-step.reached'), backup.child);
    await writers.after(2);
    writeFileSync(path.join(holdDir, 'database-step.release'), '');
    // …and between the databases' snapshot and the copy of the files.
    await appears(path.join(holdDir, 'databases-copied.reached'), backup.child);
    await writers.after(2);
    writeFileSync(path.join(holdDir, 'databases-copied.release'), '');
    backupOutput = await backup.result;
    after = await snapshot(ws.api);
    await writers.stop();
    uploaded = writers.written.expenses;
    await system.stop();

    const restore = await runCli(['restore', '--from', backupDir, '--data-dir', restoredDir]).result;
    if (restore.code !== 0) throw new Error(`restore failed: ${restore.stderr}`);
    restored = await startProcess(dist('deploy/embedded/main.js'), { DATA_DIR: restoredDir, PORT: '0' }, 'restored system', withoutEngines());
    api = new Api(`http://127.0.0.1:${restored.port}`, ws.pat);
  });

  afterAll(async () => {
    if (restored && restored.child.exitCode === null) {
      const exited = new Promise((resolve) => restored.child.once('exit', resolve));
      restored.child.kill('SIGTERM');
      await exited;
    }
  });

  it('the backup ran through both holds while the writers wrote, restarted its database copy, and reported progress on stderr', () => {
    expect(backupOutput.code).toBe(0);
    expect(JSON.parse(backupOutput.stdout)).toMatchObject({ to: backupDir, databases: ['invoicing.db'] });
    expect(backupOutput.stderr).toContain('invoicing backup: invoicing.db: changed during the copy; copying the rest in one step');
    expect(backupOutput.stderr).toMatch(/invoicing backup: done: \d+ files/);
    // Nothing of the running process's own state (its locked edge.db and that file's WAL, sockets, pid).
    const manifest = JSON.parse(readFileSync(path.join(backupDir, 'manifest.json'), 'utf8')) as { files: Array<{ path: string }> };
    expect(manifest.files.map((f) => f.path).filter((p) => /^(edge\.db|runtime\.json|grpc\/|spool\/)/.test(p))).toEqual([]);
    expect(manifest.files.map((f) => f.path)).toEqual(expect.arrayContaining(['invoicing.db', 'secrets.json']));
  });

  it('the restored system answers with the same credentials (tokens, secrets and data restored together)', async () => {
    expect((await api.get(`/api/v1/user/accounts/${ws.id}`)).status).toBe(200);
  });

  it.each(KINDS)('%s: everything that existed before the backup started, nothing that did not exist when it ended', async (kind) => {
    const now = ids(await listAll(api, `${ws.base}/${kind}`));
    expect(subset(before[kind], now)).toEqual([]);
    expect(subset(now, after[kind])).toEqual([]);
    // The writes held inside the backup happened: the bounds are apart, so the check above means something.
    expect(after[kind].size).toBeGreaterThan(before[kind].size);
  });

  it('every listed contact, invoice and expense is readable', async () => {
    for (const kind of KINDS) {
      for (const item of await listAll(api, `${ws.base}/${kind}`)) {
        const res = await api.get(`${ws.base}/${kind}/${item.id}`);
        expect([kind, item.id, res.status]).toEqual([kind, item.id, 200]);
      }
    }
  });

  it('invoice numbers are gapless, and the sequence goes on from the last one', async () => {
    // Issued first: an issue caught between its two writes by the snapshot is completed by the next one.
    const draft = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] });
    const issued = await api.post(`${ws.base}/invoices/${draft.body.id}/issue`);
    expect(issued.status).toBe(200);
    const numbers = (await listAll(api, `${ws.base}/invoices`))
      .filter((i) => i.number)
      .map((i) => Number(String(i.number).slice(String(year).length)))
      .sort((a, b) => a - b);
    expect(numbers.length).toBeGreaterThan(before.invoices.size);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    expect(issued.body.number).toBe(`${year}${String(numbers.length).padStart(6, '0')}`);
  });

  it('every expense file downloads with the bytes that were uploaded', async () => {
    const expenses = await listAll(api, `${ws.base}/expenses`);
    expect(expenses.length).toBeGreaterThan(0);
    for (const expense of expenses) {
      const res = await api.get(`${ws.base}/expenses/${expense.id}/file`);
      expect([expense.id, res.status]).toEqual([expense.id, 200]);
      expect(res.bytes.equals(uploaded.get(expense.id)!)).toBe(true);
    }
  });

  it("the workspace's logo and an invoice's rendered PDF download as they were", async () => {
    const account = await api.get(`/api/v1/user/accounts/${ws.id}`);
    const image = await fetch(account.body.logo_url);
    expect(image.status).toBe(200);
    expect(Buffer.from(await image.arrayBuffer()).equals(logo)).toBe(true);
    const pdf = await api.get(`${ws.base}/invoices/${pdfBefore.id}/pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.bytes.equals(pdfBefore.bytes)).toBe(true);
  });

  it('restore refuses the DATA_DIR the restored system runs on, even with --force', async () => {
    const refused = await runCli(['restore', '--from', backupDir, '--data-dir', restoredDir, '--force', '--json']).result;
    expect(refused.code).toBe(1);
    // Progress lines first, then the error as the last line.
    const last = refused.stderr.trim().split('\n').pop()!;
    expect(JSON.parse(last).error).toMatchObject({ code: 'system_running', message: expect.stringMatching(/stop it first/) });
  });
});

describe('the embedded system on an interrupted restore', () => {
  it('refuses to start, naming the restore', async () => {
    const dir = mkdtempSync(path.join(scratch, 'interrupted-'));
    writeFileSync(path.join(dir, '.restore-in-progress'), 'earlier');
    await expect(startProcess(dist('deploy/embedded/main.js'), { DATA_DIR: dir, PORT: '0' }, 'system on an interrupted restore', withoutEngines())).rejects.toThrow(
      /a restore into .* is in progress or was interrupted/,
    );
  });
});
