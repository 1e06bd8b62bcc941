// Spec §3 "Extraction status", §4 Expenses "Upload", "File download", retry_extraction, §8 limits —
// with real files generated here (pdf-lib, sharp). docs/expenses.md "Upload", "File download", "Extraction".
import { Client as MinioClient } from 'minio';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Api, ApiResponse, eventually } from '../support/api';
import { fakePdf, imageFile, pdfFile, truncated } from '../support/expense-files';
import { createWorkspace, tokenFor, Workspace } from '../support/fixtures';
import { realEngineEnv } from '../support/real-engines';
import { startSystem, System } from '../support/system';

const bucket = `expfiles-${randomBytes(4).toString('hex')}`;
let system: System;
let api: Api;
let ws: Workspace;
let base: string;

beforeAll(async () => {
  // Polling a job's status is many requests: the general limit is not what this suite tests.
  system = await startSystem({ env: { MINIO_BUCKET: bucket, EXTRACTION_POLL_MS: '300', EXTRACTION_JOB_TIMEOUT_MS: '20000', EXTRACTION_LEASE_MARGIN_MS: '5000', EXTRACTION_RETRY_COOLDOWN_MS: '15000', RATE_LIMIT_GENERAL: '1000000' } });
  ws = await createWorkspace(system);
  api = new Api(system.baseUrl, ws.pat);
  base = `/api/v1/accounts/${ws.id}/expenses`;
});
afterAll(() => system?.stop());

function form(file: Buffer | null, type = 'application/pdf', name = 'receipt.pdf', extra: Record<string, string> = {}): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(extra)) f.append(k, v);
  if (file) f.append('file', new Blob([file], { type }), name);
  return f;
}

const upload = (body: FormData, options: { token?: string; key?: string; account?: number } = {}): Promise<ApiResponse> =>
  api.request('POST', `/api/v1/accounts/${options.account ?? ws.id}/expenses/upload`, {
    rawBody: body,
    token: options.token,
    headers: options.key ? { 'idempotency-key': options.key } : {},
  });

/** Stored expense files of a workspace, as the blob store holds them (embedded: DATA_DIR/blobs; distributed: MinIO). */
async function storedFiles(accountId: number): Promise<number> {
  if (system.mode === 'embedded') {
    const dir = path.join(system.dataDir, 'blobs', 'expenses', String(accountId));
    if (!existsSync(dir)) return 0;
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.endsWith('.type')).length;
  }
  const env = realEngineEnv();
  const client = new MinioClient({ endPoint: env.MINIO_ENDPOINT, port: Number(env.MINIO_PORT), useSSL: env.MINIO_USE_SSL === 'true', accessKey: env.MINIO_ACCESS_KEY, secretKey: env.MINIO_SECRET_KEY });
  if (!(await client.bucketExists(bucket))) return 0;
  let count = 0;
  for await (const _ of client.listObjectsV2(bucket, `expenses/${accountId}/`, true)) count++;
  return count;
}

async function expenseCount(w: { id: number; pat: string }): Promise<number> {
  return (await new Api(system.baseUrl, w.pat).get(`/api/v1/accounts/${w.id}/expenses?limit=100`)).body.data.length;
}

describe('POST /accounts/<account_id>/expenses/upload', () => {
  it('201 Expense, extraction_status pending with a job_id; the type is the sniffed one; Location points at it', async () => {
    const pdf = await pdfFile();
    const res = await upload(form(pdf, 'application/pdf', 'Faktúra 7.pdf'));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ extraction_status: 'pending', rejected_job_id: null, file: { filename: 'Faktúra 7.pdf', content_type: 'application/pdf', size: pdf.length } });
    expect(res.body.job_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('location')).toBe(`${base}/${res.body.id}`);
    expect((await api.get(`${base}/${res.body.id}`)).body.file).toEqual(res.body.file);
  });

  it.each([
    ['image/png', 'png'],
    ['image/jpeg', 'jpeg'],
    ['image/gif', 'gif'],
  ] as const)('accepts %s', async (type, format) => {
    const res = await upload(form(await imageFile(format), type, `photo.${format}`));
    expect(res.status).toBe(201);
    expect(res.body.file.content_type).toBe(type);
  });

  it('400 file_missing without a file in field `file` (a text field, or a file under another name)', async () => {
    const textOnly = await upload(form(null, '', '', { note: 'no file' }));
    expect(textOnly.status).toBe(400);
    expect(textOnly.body.error).toMatchObject({ code: 'file_missing', field: 'file' });
    const other = new FormData();
    other.append('attachment', new Blob([await pdfFile()], { type: 'application/pdf' }), 'a.pdf');
    expect((await upload(other)).body.error.code).toBe('file_missing');
  });

  it('400 too_many_files for two files (spec §8: one file per upload); nothing is stored', async () => {
    const w = await createWorkspace(system, 'Two files');
    const f = form(await pdfFile());
    f.append('file', new Blob([await pdfFile()], { type: 'application/pdf' }), 'second.pdf');
    const res = await upload(f, { token: w.pat, account: w.id });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('too_many_files');
    expect(await expenseCount(w)).toBe(0);
    expect(await storedFiles(w.id)).toBe(0);
  });

  describe('422 for a file that is not acceptable; nothing is stored, no expense is created', () => {
    let w: Workspace;
    beforeAll(async () => {
      w = await createWorkspace(system, 'Refusals');
    });
    afterAll(async () => {
      expect(await expenseCount(w)).toBe(0);
      expect(await storedFiles(w.id)).toBe(0);
    });
    const cases: Array<[string, string, () => Promise<FormData>]> = [
      ['file_empty', 'an empty file', async () => form(Buffer.alloc(0))],
      ['file_type_not_allowed', 'a text file', async () => form(Buffer.from('hello, this is plain text'), 'text/plain', 'notes.txt')],
      ['file_type_not_allowed', 'a WebP image', async () => form(await (await import('sharp')).default({ create: { width: 4, height: 4, channels: 3, background: '#000' } }).webp().toBuffer(), 'image/webp', 'a.webp')],
      ['file_type_mismatch', 'a PDF declared as image/png', async () => form(await pdfFile(), 'image/png', 'a.png')],
      ['file_type_mismatch', 'a PNG declared as image/jpeg', async () => form(await imageFile('png'), 'image/jpeg', 'a.jpg')],
      ['file_corrupt', 'a %PDF- header with nothing valid behind it', async () => form(fakePdf())],
      ['file_corrupt', 'a truncated PDF', async () => form(truncated(await pdfFile()))],
      ['file_corrupt', 'a truncated PNG', async () => form(truncated(await imageFile('png')), 'image/png', 'a.png')],
      ['file_corrupt', 'a truncated JPEG', async () => form(truncated(await imageFile('jpeg')), 'image/jpeg', 'a.jpg')],
    ];
    it.each(cases)('%s: %s', async (code, _what, make) => {
      const res = await upload(await make(), { token: w.pat, account: w.id });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code, field: 'file' });
    });

    it('file_too_large above 10 MB: refused without reading the rest of the body', async () => {
      const big = Buffer.concat([await pdfFile(), randomBytes(11 * 1024 * 1024)]);
      // Sent without Content-Length (chunked), so the gateway must count; the client holds back the
      // last megabyte until it has an answer: the answer comes without the rest of the body.
      const answer = await rawUpload(w, big, { chunked: true, holdAfter: 10.5 * 1024 * 1024 });
      expect(answer.status).toBe(422);
      expect(JSON.parse(answer.body).error.code).toBe('file_too_large');
      expect(answer.sentBytes).toBeLessThan(big.length);
    });
  });

  it('an upload interrupted mid-body (the client goes away) leaves no expense and no file', async () => {
    const w = await createWorkspace(system, 'Interrupted');
    const file = Buffer.concat([await pdfFile(), randomBytes(2 * 1024 * 1024)]);
    await rawUpload(w, file, { abortAfter: 1024 * 1024 });
    // The gateway answers nothing to a closed connection; what matters is what was (not) stored.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await expenseCount(w)).toBe(0);
    expect(await storedFiles(w.id)).toBe(0);
    // The workspace still takes a complete upload afterwards.
    expect((await upload(form(await pdfFile()), { token: w.pat, account: w.id })).status).toBe(201);
    expect(await storedFiles(w.id)).toBe(1);
  });

  it('402 with upgrade_url without the attachment_to_document feature (the upload rule beats §7’s 403) and without an active subscription', async () => {
    const w = await createWorkspace(system, 'No feature');
    await system.cli('plan', 'set', '--workspace', String(w.id), '--features', 'bank_accounts');
    const res = await upload(form(await pdfFile()), { token: w.pat, account: w.id });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatchObject({ code: 'feature_not_in_plan' });
    expect(res.body.error.upgrade_url).toMatch(/^https?:\/\//);
    await system.cli('plan', 'set', '--workspace', String(w.id), '--active', 'false');
    const inactive = await upload(form(await pdfFile()), { token: w.pat, account: w.id });
    expect(inactive.status).toBe(402);
    expect(inactive.body.error.upgrade_url).toMatch(/^https?:\/\//);
    expect(await storedFiles(w.id)).toBe(0);
  });

  it('needs manage:expenses (403 for read/write keys)', async () => {
    for (const scopes of ['write:expenses', 'read:expenses']) {
      const token = await tokenFor(system, 'pat', ws.ownerEmail, scopes);
      const res = await upload(form(await pdfFile()), { token });
      expect(res.status).toBe(403);
      expect(res.body.error.required_scope).toBe('manage:expenses');
    }
  });

  it('Idempotency-Key: a replay answers the same expense and stores no second file; another file under the key is 409', async () => {
    const w = await createWorkspace(system, 'Keys');
    const key = randomUUID();
    const pdf = await pdfFile('Keyed upload');
    const first = await upload(form(pdf), { token: w.pat, account: w.id, key });
    expect(first.status).toBe(201);
    const replay = await upload(form(pdf), { token: w.pat, account: w.id, key });
    expect(replay.status).toBe(201);
    expect(replay.body.id).toBe(first.body.id);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const other = await upload(form(await pdfFile('Another file')), { token: w.pat, account: w.id, key });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_key_conflict');
    expect(await expenseCount(w)).toBe(1);
    expect(await storedFiles(w.id)).toBe(1);
  });
});

describe('GET /accounts/<account_id>/expenses/<id>/file', () => {
  it('the original bytes with their MIME type; attachment by default, inline on request; RFC 6266 file names', async () => {
    const png = await imageFile('png');
    const created = (await upload(form(png, 'image/png', 'Účtenka 1.png'))).body;
    const res = await api.get(`${base}/${created.id}/file`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(res.bytes!).equals(png)).toBe(true);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Uctenka 1.png"; filename*=UTF-8''%C3%9A%C4%8Dtenka%201.png`);
    const inline = await api.get(`${base}/${created.id}/file?disposition=inline`);
    expect(inline.headers.get('content-disposition')).toMatch(/^inline; filename="Uctenka 1.png"/);
    expect((await api.get(`${base}/${created.id}/file?disposition=weird`)).headers.get('content-disposition')).toMatch(/^attachment;/);
  });

  it('404 for a missing expense and for an expense without a file', async () => {
    expect((await api.get(`${base}/999999999/file`)).status).toBe(404);
    const manual = (await api.post(base, { expense: { note: 'typed in' } })).body;
    const res = await api.get(`${base}/${manual.id}/file`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('resource_not_found');
  });

  it('needs read:expenses', async () => {
    const created = (await upload(form(await pdfFile()))).body;
    const reader = await tokenFor(system, 'pat', ws.ownerEmail, 'read:expenses');
    expect((await api.request('GET', `${base}/${created.id}/file`, { token: reader })).status).toBe(200);
    const other = await tokenFor(system, 'pat', ws.ownerEmail, 'read:invoices');
    expect((await api.request('GET', `${base}/${created.id}/file`, { token: other })).status).toBe(403);
  });
});

describe('extraction jobs and POST …/retry_extraction', () => {
  it('a job runs off the request path: pending → completed, with the read fields and their confidence', async () => {
    const created = (await upload(form(await pdfFile()))).body;
    const done = await eventually(async () => {
      const e = (await api.get(`${base}/${created.id}`)).body;
      if (e.extraction_status !== 'completed' && e.extraction_status !== 'failed') throw new Error(`still ${JSON.stringify(e)}`);
      return e;
    }, 180_000); // OCR under a loaded CI run
    expect(done.extraction_failure).toBeNull();
    expect(done.extraction_status).toBe('completed');
    expect(done.job_id).toBe(created.job_id);
    expect(done.extraction_failure).toBeNull();
    expect(typeof done.confidence).toBe('object');
  });

  it('422 no_attachment for an expense without a file', async () => {
    const manual = (await api.post(base, { expense: { note: 'typed in' } })).body;
    const res = await api.post(`${base}/${manual.id}/retry_extraction`, undefined);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('no_attachment');
  });

  it('a retry: within the cooldown after completion 422 retry_cooldown; after it 200 pending, a new job_id, the previous one as rejected_job_id; then refused while that job is due', async () => {
    const created = (await upload(form(await pdfFile()))).body;
    await eventually(async () => {
      const e = (await api.get(`${base}/${created.id}`)).body;
      if (e.extraction_status !== 'completed') throw new Error(`still ${JSON.stringify(e)}`);
    }, 60_000);
    // The cooldown (EXTRACTION_RETRY_COOLDOWN_MS, 15 s in this suite) counts from the completion: every
    // refusal until it ends is retry_cooldown, then the retry is taken.
    const retried = await eventually(async () => {
      const res = await api.post(`${base}/${created.id}/retry_extraction`, undefined);
      if (res.status === 422) expect(res.body.error.code).toBe('retry_cooldown');
      if (res.status !== 200) throw new Error(`retry answered ${res.status}`);
      return res;
    }, 60_000);
    expect(retried.body).toMatchObject({ extraction_status: 'pending', rejected_job_id: created.job_id });
    expect(retried.body.job_id).not.toBe(created.job_id);
    // Right after: the escalated job is pending or running (extraction_in_progress), or — a text PDF takes
    // milliseconds — it already completed and the cooldown applies again.
    const again = await api.post(`${base}/${created.id}/retry_extraction`, undefined);
    expect(again.status).toBe(422);
    expect(['extraction_in_progress', 'retry_cooldown']).toContain(again.body.error.code);
    await eventually(async () => {
      const e = (await api.get(`${base}/${created.id}`)).body;
      if (e.extraction_status !== 'completed') throw new Error(`still ${JSON.stringify(e)}`);
    }, 60_000);
    const tooSoon = await api.post(`${base}/${created.id}/retry_extraction`, undefined);
    expect(tooSoon.status).toBe(422);
    expect(tooSoon.body.error.code).toBe('retry_cooldown');
  });

  it('the ai_expense_extractions quota: when used up an upload is stored as manual (no job) and a retry is 402', async () => {
    const w = await createWorkspace(system, 'Quota');
    await system.cli('plan', 'set', '--workspace', String(w.id), '--quota', 'ai_expense_extractions=1');
    const first = await upload(form(await pdfFile()), { token: w.pat, account: w.id });
    expect(first.body).toMatchObject({ extraction_status: 'pending' });
    const second = await upload(form(await pdfFile()), { token: w.pat, account: w.id });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ extraction_status: 'manual', job_id: null });
    expect(second.body.file.content_type).toBe('application/pdf');
    const retry = await new Api(system.baseUrl, w.pat).post(`/api/v1/accounts/${w.id}/expenses/${second.body.id}/retry_extraction`, undefined);
    expect(retry.status).toBe(402);
    expect(retry.body.error.code).toBe('extraction_quota_exhausted');
    expect(retry.body.error.upgrade_url).toMatch(/^https?:\/\//);
  });

  it('needs manage:expenses', async () => {
    const created = (await upload(form(await pdfFile()))).body;
    const writer = await tokenFor(system, 'pat', ws.ownerEmail, 'write:expenses');
    const res = await api.request('POST', `${base}/${created.id}/retry_extraction`, { token: writer });
    expect(res.status).toBe(403);
  });
});

/** A multipart upload over a raw socket: optionally chunked (no Content-Length), optionally cut off. */
function rawUpload(w: Workspace, file: Buffer, options: { chunked?: boolean; abortAfter?: number; holdAfter?: number }): Promise<{ status: number; body: string; sentBytes: number }> {
  const boundary = `----b${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const body = Buffer.concat([head, file, tail]);
  const url = new URL(`/api/v1/accounts/${w.id}/expenses/upload`, system.baseUrl);
  return new Promise((resolve) => {
    let sent = 0;
    const headers: Record<string, string> = { authorization: `Bearer ${w.pat}`, 'content-type': `multipart/form-data; boundary=${boundary}` };
    if (!options.chunked) headers['content-length'] = String(body.length);
    const req = http.request(url, { method: 'POST', headers });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString(), sentBytes: sent }));
    });
    req.on('error', () => {
      if (!answered) resolve({ status: 0, body: '', sentBytes: sent });
    });
    const step = 64 * 1024;
    const pump = () => {
      while (sent < body.length && !answered) {
        if (options.abortAfter !== undefined && sent >= options.abortAfter) {
          req.destroy();
          resolve({ status: 0, body: '', sentBytes: sent });
          return;
        }
        if (options.holdAfter !== undefined && sent >= options.holdAfter) return; // wait for the answer
        const chunk = body.subarray(sent, sent + step);
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}
