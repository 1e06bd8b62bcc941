// The distributed system started as the chart starts it: each process sees only its workload's credentials
// (docs/operations.md "Secrets per workload"; the same table test/unit/helm-chart.test.ts checks in the chart).
// Every process starts, and the request chain that needs each secret works: sessions signed by identity and
// accepted by the gateway without JWT_SECRET, cursors of the services, blobs of identity and expenses.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Api } from '../support/api';
import { pdfFile } from '../support/expense-files';
import { createWorkspace, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let api: Api;
let ws: Workspace;

beforeAll(async () => {
  system = await startSystem({ mode: 'distributed', leastPrivilege: true });
  ws = await createWorkspace(system);
  api = new Api(system.baseUrl, ws.pat);
});
afterAll(() => system?.stop());

describe('the distributed system with only the credentials the chart gives each workload', () => {
  it('a session signed by identity is accepted by a gateway that holds no signing secret', async () => {
    const signIn = await api.post('/api/v1/auth/sign_in', { email: ws.ownerEmail, password: 'correct-horse' }, { token: null });
    expect(signIn.status).toBe(200);
    expect((await api.get('/api/v1/user/accounts', { token: signIn.body.token })).status).toBe(200);
  });

  it('contacts pages with its cursors (CURSOR_SECRET)', async () => {
    for (const name of ['Alpha s.r.o.', 'Beta s.r.o.', 'Gamma s.r.o.']) {
      expect((await api.post(`/api/v1/accounts/${ws.id}/contacts`, { invoice_account: { name } })).status).toBe(201);
    }
    const first = await api.get(`/api/v1/accounts/${ws.id}/contacts?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    const cursor = first.body.next_cursor;
    expect(typeof cursor).toBe('string');
    const second = await api.get(`/api/v1/accounts/${ws.id}/contacts?limit=2&cursor=${encodeURIComponent(cursor)}`);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.body.data).toHaveLength(1);
  });

  it('identity stores a logo and expenses a file on MinIO (the blob users hold its keys)', async () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]);
    const file = path.join(os.tmpdir(), `logo-${randomBytes(4).toString('hex')}.png`);
    writeFileSync(file, png);
    await system.cli('workspace', 'set-logo', '--workspace', String(ws.id), '--file', file);
    const logo = await fetch((await api.get(`/api/v1/user/accounts/${ws.id}`)).body.logo_url);
    expect(Buffer.from(await logo.arrayBuffer()).equals(png)).toBe(true);

    const form = new FormData();
    form.append('file', new Blob([await pdfFile()], { type: 'application/pdf' }), 'receipt.pdf');
    const upload = await api.request('POST', `/api/v1/accounts/${ws.id}/expenses/upload`, { rawBody: form });
    expect(upload.status).toBe(201);
    const download = await api.get(`/api/v1/accounts/${ws.id}/expenses/${upload.body.id}/file`);
    expect(download.status).toBe(200);
  });
});
