// Request bodies (docs/edge.md, "Request bodies"): how the gateway reads every POST and PATCH body.
import { Api } from '../support/api';
import { createWorkspace, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let api: Api;
let ws: Workspace;
let contacts: string;
let invoices: string;
let purchaser: number;

beforeAll(async () => {
  system = await startSystem();
  ws = await createWorkspace(system);
  api = new Api(system.baseUrl, ws.pat);
  contacts = `/api/v1/accounts/${ws.id}/contacts`;
  invoices = `/api/v1/accounts/${ws.id}/invoices`;
  await system.cli('plan', 'set', '--workspace', String(ws.id), '--cap', 'bank_accounts=10');
  purchaser = (await api.post(contacts, { name: 'Buyer', invoice_account: { name: 'Buyer a.s.', email: 'ap@buyer.example' } })).body.invoice_account_id;
});
afterAll(() => system?.stop());

const json = { 'content-type': 'application/json' };
const valid = JSON.stringify({ name: 'Body test', invoice_account: { name: 'Body Test s.r.o.' } });

async function issuedInvoice(): Promise<{ id: number }> {
  const draft = await api.post(invoices, { purchaser_id: purchaser, line_items: [{ name: 'Work', unit_price: '10' }] });
  const issued = await api.post(`${invoices}/${draft.body.id}/issue`);
  if (issued.status !== 200) throw new Error(`issue: ${issued.status} ${issued.text}`);
  return issued.body;
}

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

  it('400 malformed_json for bytes that are not UTF-8 and for unpaired surrogate escapes: stored is what was sent, never U+FFFD', async () => {
    const before = await contactCount();
    const notUtf8 = Buffer.concat([Buffer.from('{"name": "Body test '), Buffer.from([0xff, 0xfe]), Buffer.from('", "invoice_account": {"name": "X"}}')]);
    const res = await api.request('POST', contacts, { rawBody: notUtf8, headers: json });
    expect([res.status, res.body.error.code]).toEqual([400, 'malformed_json']);
    for (const raw of ['{"name": "Body test \\ud800", "invoice_account": {"name": "X"}}', '{"name": "Body test", "invoice_account": {"name": "\\udc00x"}}']) {
      const lone = await api.request('POST', contacts, { rawBody: raw, headers: json });
      expect([raw, lone.status, lone.body.error.code]).toEqual([raw, 400, 'malformed_json']);
    }
    expect(await contactCount()).toBe(before);
    // A surrogate pair, escaped or not, is text like any other.
    const pair = await api.request('POST', contacts, { rawBody: '{"name": "Body test \\ud83d\\ude00 😀", "invoice_account": {"name": "Pair s.r.o."}}', headers: json });
    expect([pair.status, pair.body.name]).toEqual([201, 'Body test 😀 😀']);
  });

  it('an empty body is no body: 422 missing_body where the body is required (not 400)', async () => {
    for (const raw of ['', '  \n']) {
      const res = await api.request('POST', contacts, { rawBody: raw, headers: json });
      expect([raw, res.status, res.body.error.code]).toEqual([raw, 422, 'missing_body']);
    }
  });
});

describe('415 unsupported_media_type: the API takes JSON bodies only, nothing is written', () => {
  const NOT_JSON: Array<[string, Record<string, string>, string | Buffer]> = [
    ['text/plain', { 'content-type': 'text/plain' }, valid],
    ['form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, 'name=Body+test&invoice_account[name]=X'],
    ['no Content-Type', {}, Buffer.from(valid)],
    ['application/jsonx', { 'content-type': 'application/jsonx' }, valid],
  ];

  it.each(NOT_JSON)('POST with %s → 415, nothing created', async (_label, headers, raw) => {
    const before = await contactCount();
    const res = await api.request('POST', contacts, { rawBody: raw, headers });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
    expect(await contactCount()).toBe(before);
  });

  it.each(NOT_JSON)('PATCH with %s → 415, not a 200 that changed nothing', async (_label, headers, raw) => {
    const created = await api.post(contacts, { name: 'Body test media', invoice_account: { name: 'Media s.r.o.' } });
    const res = await api.request('PATCH', `${contacts}/${created.body.id}`, { rawBody: raw, headers });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
    expect((await api.get(`${contacts}/${created.body.id}`)).body).toEqual(created.body);
  });

  it('POST …/invoices/<id>/send with a text body → 415 (its `to` is not ignored)', async () => {
    const invoice = await issuedInvoice();
    const res = await api.request('POST', `${invoices}/${invoice.id}/send`, { rawBody: JSON.stringify({ to: 'other@example.com' }), headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect((await api.get(`${invoices}/${invoice.id}`)).body.email_sent_at).toBeNull();
  });
});

describe('operations whose body is optional or absent (send, issue, mark_paid, conversions)', () => {
  it('send: no body and no Content-Type means "all defaults", as an empty JSON object does', async () => {
    const invoice = await issuedInvoice();
    const res = await api.request('POST', `${invoices}/${invoice.id}/send`);
    expect(res.status).toBe(200);
    expect(res.body.email_sent_at).not.toBeNull();
  });

  it('an action without a documented body accepts none or {}; fields → 422 unknown_field, other types → 415', async () => {
    const draft = await api.post(invoices, { purchaser_id: purchaser, line_items: [{ name: 'Work', unit_price: '10' }] });
    const issue = `${invoices}/${draft.body.id}/issue`;
    const unknown = await api.post(issue, { number: 'X-1' });
    expect([unknown.status, unknown.body.error.code, unknown.body.error.field]).toEqual([422, 'unknown_field', 'number']);
    const text = await api.request('POST', issue, { rawBody: 'issue it', headers: { 'content-type': 'text/plain' } });
    expect([text.status, text.body.error.code]).toEqual([415, 'unsupported_media_type']);
    expect((await api.get(`${invoices}/${draft.body.id}`)).body.status).toBe('draft');
    const issued = await api.post(issue, {});
    expect([issued.status, issued.body.status]).toEqual([200, 'exposed']);
    const paid = await api.request('POST', `${invoices}/${draft.body.id}/mark_paid`);
    expect([paid.status, paid.body.status]).toEqual([200, 'paid']);
  });
});

describe('PATCH bodies', () => {
  it('no body → 422 missing_body, nothing written (updated_at unchanged)', async () => {
    const created = await api.post(contacts, { name: 'Body test nobody', invoice_account: { name: 'Nobody s.r.o.' } });
    for (const options of [{}, { rawBody: '', headers: json }]) {
      const res = await api.request('PATCH', `${contacts}/${created.body.id}`, options);
      expect([res.status, res.body.error.code]).toEqual([422, 'missing_body']);
    }
    const draft = await api.post(invoices, { purchaser_id: purchaser });
    const res = await api.request('PATCH', `${invoices}/${draft.body.id}`);
    expect([res.status, res.body.error.code]).toEqual([422, 'missing_body']);
    expect((await api.get(`${contacts}/${created.body.id}`)).body.updated_at).toBe(created.body.updated_at);
    expect((await api.get(`${invoices}/${draft.body.id}`)).body.updated_at).toBe(draft.body.updated_at);
  });

  it('{} names no field: 200 with the record as GET shows it, nothing written (updated_at unchanged)', async () => {
    const contact = await api.post(contacts, { name: 'Body test empty', invoice_account: { name: 'Empty s.r.o.' } });
    const draft = await api.post(invoices, { purchaser_id: purchaser });
    const bank = await api.post(`/api/v1/accounts/${ws.id}/bank_accounts`, { name: 'Empty patch', iban: 'DE89370400440532013000' });
    for (const path of [`${contacts}/${contact.body.id}`, `${invoices}/${draft.body.id}`, `/api/v1/accounts/${ws.id}/bank_accounts/${bank.body.id}`]) {
      const before = await api.get(path);
      const res = await api.patch(path, {});
      expect([path, res.status]).toEqual([path, 200]);
      expect(res.body).toEqual(before.body);
      expect((await api.get(path)).body.updated_at).toBe(before.body.updated_at);
    }
  });

  it('{} on a deleted record is 404, as any PATCH of it is', async () => {
    const bank = await api.post(`/api/v1/accounts/${ws.id}/bank_accounts`, { name: 'Deleted', iban: 'GB82WEST12345698765432' });
    await api.delete(`/api/v1/accounts/${ws.id}/bank_accounts/${bank.body.id}`);
    const res = await api.patch(`/api/v1/accounts/${ws.id}/bank_accounts/${bank.body.id}`, {});
    expect(res.status).toBe(404);
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
