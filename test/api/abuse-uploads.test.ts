// Issue #17, a hostile tenant's uploads and downloads (docs/edge.md "Uploads", "Downloads"; docs/expenses.md
// "Upload", "File names"): cut-short uploads leave no spool files (and a crash's leftovers are removed at
// start), refusals arrive on the first bytes without the rest of the body being read, stored file names
// carry no bidi or other invisible characters, and files shown inline are sandboxed. Both modes.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Api, eventually } from '../support/api';
import { docsWorkspace } from '../support/documents';
import { imageFile, pdfFile } from '../support/expense-files';
import { createWorkspace, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

/** Short enough that a stalled body is cut within the test, and far longer than any real body here takes (≤ 11 MB on loopback, under load). */
const UPLOAD_TIMEOUT_MS = 15_000;
const MiB = 1024 * 1024;

let system: System;
let ws: Workspace;

beforeAll(async () => {
  system = await startSystem({ env: { UPLOAD_TIMEOUT_MS: String(UPLOAD_TIMEOUT_MS), RATE_LIMIT_GENERAL: '1000000' } });
  ws = await createWorkspace(system, 'Uploader');
});
afterAll(() => system?.stop());

/** The gateways' spool directory: UPLOAD_SPOOL_DIR's default, DATA_DIR/spool (every gateway of the system). */
const spoolDir = () => path.join(system.dataDir, 'spool');
const spoolFiles = () => (existsSync(spoolDir()) ? readdirSync(spoolDir()).length : 0);

/** Polls (bounded) until the spool directory is empty. */
const spoolEmpties = () =>
  eventually(async () => {
    const left = spoolFiles();
    if (left !== 0) throw new Error(`${left} spool files left in ${spoolDir()}`);
  }, 20_000);

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One multipart upload over a raw socket, sent as the test decides: `send(n)` writes the next n bytes of
 * the body (all of it when n is omitted), `response` settles with the parsed answer, `closedByServer`
 * when the server ends the connection. `sent` is what the client has written so far.
 */
class RawUpload {
  readonly total: number;
  sent = 0;
  readonly response: Promise<RawResponse>;
  readonly closedByServer: Promise<void>;
  private readonly socket: net.Socket;
  private readonly body: Buffer;
  private readonly chunked: boolean;

  constructor(
    readonly w: Workspace,
    file: Buffer,
    options: { type?: string; filename?: string; chunked?: boolean } = {},
  ) {
    const boundary = `----b${randomBytes(8).toString('hex')}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${options.filename ?? 'upload.pdf'}"\r\nContent-Type: ${options.type ?? 'application/pdf'}\r\n\r\n`,
    );
    this.body = Buffer.concat([head, file, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    this.total = this.body.length;
    // Straight to the first gateway (no proxy in cluster mode): its own connection handling is under test.
    const url = new URL(system.baseUrls[0]);
    this.socket = net.connect(Number(url.port), url.hostname);
    this.socket.on('error', () => undefined); // a write after the server closed: expected here
    this.chunked = options.chunked ?? false;
    this.socket.write(
      `POST /api/v1/accounts/${w.id}/expenses/upload HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${w.pat}\r\n` +
        `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
        (this.chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${this.total}\r\n`) +
        '\r\n',
    );
    let received = Buffer.alloc(0);
    this.response = new Promise((resolve, reject) => {
      this.socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const parsed = parseResponse(received);
        if (parsed) resolve(parsed);
      });
      this.socket.on('close', () => reject(new Error(`the connection closed without a complete answer (${received.length} bytes received)`)));
    });
    this.response.catch(() => undefined);
    this.closedByServer = new Promise((resolve) => {
      this.socket.once('end', () => resolve());
      this.socket.once('close', () => resolve());
    });
  }

  /** Writes the next `bytes` of the body (with backpressure); stops early when the connection is gone. */
  async send(bytes = this.total - this.sent): Promise<void> {
    const until = Math.min(this.total, this.sent + bytes);
    while (this.sent < until && !this.socket.destroyed && this.socket.writable) {
      const piece = this.body.subarray(this.sent, Math.min(until, this.sent + 64 * 1024));
      this.sent += piece.length;
      const framed = this.chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
      if (!this.socket.write(framed)) await new Promise((resolve) => this.socket.once('drain', resolve).once('close', resolve));
    }
    if (this.sent === this.total && this.chunked && this.socket.writable) this.socket.write('0\r\n\r\n');
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function parseResponse(bytes: Buffer): RawResponse | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (bytes.length < end + 4 + length) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body: bytes.subarray(end + 4, end + 4 + length).toString('utf8') };
}

/** A valid PDF's first bytes followed by `extra` bytes: passes the type screen, so the gateway spools it. */
const pdfOf = async (extra: number) => Buffer.concat([await pdfFile(), randomBytes(extra)]);

describe('Leaked spool files: uploads cut short leave none behind', () => {
  it('20 uploads cut short — over the limit, client gone mid-body, a stalled body hitting UPLOAD_TIMEOUT_MS — leave 0 spool files', async () => {
    await spoolEmpties();
    // Stalled bodies: 1 MiB sent, the rest held. While they are held there are spool files (the test
    // watches the right directory); the gateway answers 408 at the timeout and deletes them.
    const stalled = await Promise.all(Array.from({ length: 6 }, async () => new RawUpload(ws, await pdfOf(2 * MiB))));
    await Promise.all(stalled.map((u) => u.send(MiB)));
    await eventually(async () => {
      if (spoolFiles() === 0) throw new Error(`no spool file while ${stalled.length} uploads are held`);
    }, 20_000);

    // Over the limit: sent without Content-Length (chunked), so the gateway counts; the client holds
    // the last half MiB until it has the answer.
    for (let i = 0; i < 7; i++) {
      const upload = new RawUpload(ws, await pdfOf(11 * MiB), { chunked: true });
      await upload.send(10.5 * MiB);
      const answer = await upload.response;
      expect({ status: answer.status, code: JSON.parse(answer.body).error.code }).toEqual({ status: 422, code: 'file_too_large' });
      expect(upload.sent).toBeLessThan(upload.total);
      upload.destroy();
    }

    // The client goes away after 3 MiB of a 5 MiB file.
    for (let i = 0; i < 7; i++) {
      const upload = new RawUpload(ws, await pdfOf(5 * MiB));
      await upload.send(3 * MiB);
      upload.destroy();
    }

    for (const upload of stalled) {
      const answer = await upload.response;
      expect({ status: answer.status, code: JSON.parse(answer.body).error.code, connection: answer.headers.connection }).toEqual({
        status: 408,
        code: 'upload_timeout',
        connection: 'close',
      });
      await upload.closedByServer;
      upload.destroy();
    }
    await spoolEmpties();
    // Nothing reached the service: no expense was created by any of them.
    expect((await new Api(system.baseUrl, ws.pat).get(`/api/v1/accounts/${ws.id}/expenses?limit=100`)).body.data).toEqual([]);
  });

  it('uploads that complete, or that the service refuses after receiving them (a failed call), leave none either', async () => {
    const api = new Api(system.baseUrl, ws.pat);
    const send = (file: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([file], { type: 'application/pdf' }), 'receipt.pdf');
      return api.request('POST', `/api/v1/accounts/${ws.id}/expenses/upload`, { rawBody: form });
    };
    expect((await send(await pdfFile())).status).toBe(201);
    // A %PDF- header passes the gateway's type screen; the service finds no valid PDF behind it.
    const corrupt = await send(await pdfOf(3 * MiB).then((pdf) => pdf.subarray(0, 3 * MiB)));
    expect({ status: corrupt.status, code: corrupt.body.error.code }).toEqual({ status: 422, code: 'file_corrupt' });
    await spoolEmpties();
  });

  it('the spool files of a gateway killed mid-upload are removed when it starts again', async () => {
    const held = new RawUpload(ws, await pdfOf(2 * MiB));
    await held.send(MiB);
    await eventually(async () => {
      if (spoolFiles() === 0) throw new Error('no spool file yet');
    }, 20_000);
    await system.killGateway(0);
    held.destroy();
    expect(spoolFiles()).toBeGreaterThan(0); // the crash left it
    await system.restart();
    expect(spoolFiles()).toBe(0); // removed before the restarted gateway took its first request
  });
});

describe('Early refusal: the plan and the type are checked on the first bytes, the rest is never read', () => {
  /** Sends the first 64 KiB of a large body and holds the rest; the answer must come without it. */
  async function refusedEarly(w: Workspace, file: Buffer, type: string) {
    const upload = new RawUpload(w, file, { type });
    await upload.send(64 * 1024);
    // Bounded: a gateway that waits for the whole body never answers; fail then, with a reason.
    let bound: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      upload.response,
      new Promise<never>((_, reject) => {
        bound = setTimeout(() => reject(new Error('no answer while the rest of the body is held: the gateway waits for it')), 60_000);
      }),
    ]).finally(() => clearTimeout(bound));
    const sentAtAnswer = upload.sent;
    // The server closes the connection itself: it is not waiting for the rest.
    await upload.closedByServer;
    upload.destroy();
    return { answer, sentAtAnswer, total: upload.total, error: JSON.parse(answer.body).error };
  }

  it('422 file_type_not_allowed for 9 MB of zeros, answered after the first 64 KiB, nothing spooled', async () => {
    const { answer, sentAtAnswer, total, error } = await refusedEarly(ws, Buffer.alloc(9 * MiB), 'application/pdf');
    expect(answer.status).toBe(422);
    expect(error).toMatchObject({ code: 'file_type_not_allowed', field: 'file' });
    expect(answer.headers.connection).toBe('close');
    expect(sentAtAnswer).toBe(64 * 1024);
    expect(sentAtAnswer).toBeLessThan(total);
    expect(spoolFiles()).toBe(0);
  });

  it('422 file_type_mismatch for a PNG declared as a PDF, on its first bytes', async () => {
    const png = Buffer.concat([await imageFile('png', 512), randomBytes(4 * MiB)]);
    const { answer, sentAtAnswer, total, error } = await refusedEarly(ws, png, 'application/pdf');
    expect(answer.status).toBe(422);
    expect(error).toMatchObject({ code: 'file_type_mismatch', field: 'file' });
    expect(sentAtAnswer).toBeLessThan(total);
  });

  it('402 feature_not_in_plan with upgrade_url before any of the body is needed', async () => {
    const w = await createWorkspace(system, 'No uploads');
    await system.cli('plan', 'set', '--workspace', String(w.id), '--features', 'bank_accounts');
    const { answer, sentAtAnswer, total, error } = await refusedEarly(w, await pdfOf(9 * MiB), 'application/pdf');
    expect(answer.status).toBe(402);
    expect(error).toMatchObject({ code: 'feature_not_in_plan' });
    expect(error.upgrade_url).toMatch(/^https?:\/\//);
    expect(answer.headers.connection).toBe('close');
    expect(sentAtAnswer).toBeLessThan(total);
  });
});

describe('File names: bidi and other invisible characters are stripped', () => {
  it('from the stored file.filename and from Content-Disposition', async () => {
    const api = new Api(system.baseUrl, ws.pat);
    const upload = async (name: string) => {
      const form = new FormData();
      form.append('file', new Blob([await pdfFile()], { type: 'application/pdf' }), name);
      const res = await api.request('POST', `/api/v1/accounts/${ws.id}/expenses/upload`, { rawBody: form });
      expect(res.status).toBe(201);
      return res.body;
    };
    // "invoice<RLO>fdp.html" displays as "invoice.html"; isolates, zero-width, BOM, soft hyphen, a C1 control (C0 controls: test/unit/validation.test.ts).
    const spoofed = await upload('invoice\u202Efdp.html');
    expect(spoofed.file.filename).toBe('invoicefdp.html');
    expect((await api.get(`/api/v1/accounts/${ws.id}/expenses/${spoofed.id}`)).body.file.filename).toBe('invoicefdp.html');
    const download = await api.get(`/api/v1/accounts/${ws.id}/expenses/${spoofed.id}/file`);
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="invoicefdp.html"');

    const mixed = await upload('Účtenka\u2066\u200B\uFEFF\u00AD\u0085 7\u2069.pdf');
    expect(mixed.file.filename).toBe('Účtenka 7.pdf');
    const header = (await api.get(`/api/v1/accounts/${ws.id}/expenses/${mixed.id}/file`)).headers.get('content-disposition')!;
    expect(header).toBe(`attachment; filename="Uctenka 7.pdf"; filename*=UTF-8''%C3%9A%C4%8Dtenka%207.pdf`);

    // Nothing visible left: the default name.
    expect((await upload('\u202E\u202D')).file.filename).toBe('expense.pdf');
  });
});

describe('Downloads shown inline are sandboxed; every download says nosniff', () => {
  it('invoice PDF: ?disposition=inline carries Content-Security-Policy: sandbox and nosniff, through the lean lane (GET) and express (HEAD)', async () => {
    const docs = await docsWorkspace(system);
    const created = await docs.api.post(`${docs.base}/invoices`, {
      purchaser_id: docs.purchaser,
      issue_date: '2026-03-05',
      due_date: '2026-03-19',
      line_items: [{ name: 'Consulting', quantity: '1', unit_price: '100', vat_rate: '21' }],
    });
    expect(created.status).toBe(201);
    const url = `${system.baseUrl}${docs.base}/invoices/${created.body.id}/pdf`;
    for (const method of ['GET', 'HEAD']) {
      const inline = await fetch(`${url}?disposition=inline`, { method, headers: { authorization: `Bearer ${docs.pat}` } });
      expect({ method, status: inline.status }).toEqual({ method, status: 200 });
      expect(inline.headers.get('content-disposition')).toMatch(/^inline; /);
      expect(inline.headers.get('content-security-policy')).toBe('sandbox');
      expect(inline.headers.get('x-content-type-options')).toBe('nosniff');
      const attachment = await fetch(url, { method, headers: { authorization: `Bearer ${docs.pat}` } });
      expect(attachment.headers.get('content-disposition')).toMatch(/^attachment; /);
      expect(attachment.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('expense file: ?disposition=inline carries Content-Security-Policy: sandbox and nosniff', async () => {
    const api = new Api(system.baseUrl, ws.pat);
    const form = new FormData();
    form.append('file', new Blob([await pdfFile()], { type: 'application/pdf' }), 'receipt.pdf');
    const created = (await api.request('POST', `/api/v1/accounts/${ws.id}/expenses/upload`, { rawBody: form })).body;
    const inline = await api.get(`/api/v1/accounts/${ws.id}/expenses/${created.id}/file?disposition=inline`);
    expect(inline.status).toBe(200);
    expect(inline.headers.get('content-disposition')).toMatch(/^inline; /);
    expect(inline.headers.get('content-security-policy')).toBe('sandbox');
    expect(inline.headers.get('x-content-type-options')).toBe('nosniff');
    const attachment = await api.get(`/api/v1/accounts/${ws.id}/expenses/${created.id}/file`);
    expect(attachment.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
