// Request bodies (docs/edge.md, "Request bodies"): how the gateway reads every POST and PATCH body.
import { Api } from '../support/api';
import { createWorkspace, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let api: Api;
let ws: Workspace;
let contacts: string;

beforeAll(async () => {
  system = await startSystem();
  ws = await createWorkspace(system);
  api = new Api(system.baseUrl, ws.pat);
  contacts = `/api/v1/accounts/${ws.id}/contacts`;
});
afterAll(() => system?.stop());

const json = { 'content-type': 'application/json' };
const valid = JSON.stringify({ name: 'Body test', invoice_account: { name: 'Body Test s.r.o.' } });

async function contactCount(): Promise<number> {
  const res = await api.get(`${contacts}?limit=100&q=body%20test`);
  return res.body.data.length;
}

describe('JSON bodies', () => {
  it('accepts application/json with or without charset=utf-8, and application/*+json', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON; Charset="UTF-8"', 'application/vnd.api+json']) {
      const res = await api.request('POST', contacts, { rawBody: valid, headers: { 'content-type': type } });
      expect([type, res.status]).toEqual([type, 201]);
    }
  });

  it('400 malformed_json for invalid JSON and for a top-level value that is not an object or array', async () => {
    for (const raw of ['{"name": ', 'null', '"text"', '42', '{"name": "x"} trailing']) {
      const res = await api.request('POST', contacts, { rawBody: raw, headers: json });
      expect([raw, res.status, res.body.error.code]).toEqual([raw, 400, 'malformed_json']);
    }
  });

  it('an empty JSON body reads as {} and is validated as such (422, not 400)', async () => {
    const res = await api.request('POST', contacts, { rawBody: '', headers: json });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('missing_field');
  });

  it('a body in another content type is not parsed: the missing fields are reported (422)', async () => {
    const res = await api.request('POST', contacts, { rawBody: valid, headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(422);
  });
});

describe('refused bodies, with nothing written', () => {
  it('415 unsupported_charset for a body that is not UTF-8', async () => {
    const before = await contactCount();
    const res = await api.request('POST', contacts, { rawBody: valid, headers: { 'content-type': 'application/json; charset=iso-8859-1' } });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_charset');
    expect(await contactCount()).toBe(before);
  });

  it('415 unsupported_content_encoding for a compressed body', async () => {
    const res = await api.request('POST', contacts, { rawBody: valid, headers: { ...json, 'content-encoding': 'gzip' } });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_content_encoding');
  });

  it('413 body_too_large above 1 MB, on POST and PATCH alike', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024), invoice_account: { name: 'Too big' } });
    const post = await api.request('POST', contacts, { rawBody: big, headers: json });
    expect(post.status).toBe(413);
    expect(post.body.error.code).toBe('body_too_large');
    const created = await api.post(contacts, { name: 'Body test patch', invoice_account: { name: 'Body Patch s.r.o.' } });
    const patch = await api.request('PATCH', `${contacts}/${created.body.id}`, { rawBody: big, headers: json });
    expect(patch.status).toBe(413);
    expect((await api.get(`${contacts}/${created.body.id}`)).body.name).toBe('Body test patch');
  });

  it('the connection still serves the next request after a refusal', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024, 0x20);
    const refused = await api.request('POST', contacts, { rawBody: big, headers: json });
    expect(refused.status).toBe(413);
    expect((await api.get(contacts)).status).toBe(200);
  });
});
