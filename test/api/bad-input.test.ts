// Bad input is a 4xx with a code, never a 500 (docs/edge.md, "Bad input"): forged cursors, ids beyond
// what a JSON number holds exactly, and the patterns the served OpenAPI document declares for ids,
// dates, currencies and Idempotency-Key — each agreeing with what the server does.
import { Api } from '../support/api';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { startSystem, System } from '../support/system';

let system: System;
let ws: DocsWorkspace;
let api: Api;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let served: any;

beforeAll(async () => {
  system = await startSystem();
  ws = await docsWorkspace(system);
  api = ws.api;
  served = await (await fetch(`${system.baseUrl}/api/v1/openapi.json`)).json();
});
afterAll(() => system?.stop());

const LISTS = ['contacts', 'bank_accounts', 'invoices', 'credit_notes', 'proformas', 'quotes', 'expenses'];

describe('cursor: anything the API did not issue is 422 invalid_cursor', () => {
  it.each(LISTS)('GET %s refuses forged, multibyte, truncated and huge cursors', async (list) => {
    // A real cursor of this list where it has two records (contacts has), else one of the same shape.
    const page = await api.get(`${ws.base}/${list}?limit=1`);
    expect(page.status).toBe(200);
    const real: string = page.body.next_cursor ?? 'eyJhIjpbN119.AAAAAAAAAAAAAAAAAAAAAA';
    const [body, sig] = real.split('.');
    const forged = [
      `${body}.${'é'.repeat(22)}`, // 22 characters, 44 bytes: was a 500 on every list
      `${body}.${'😀'.repeat(11)}`,
      '€',
      'not-a-cursor',
      real.slice(0, -3),
      `${real}.x`,
      Buffer.from('{"a":[1],"f":"x"}').toString('base64'),
      'A'.repeat(5000),
      `${body}.${sig.toLowerCase() === sig ? sig.toUpperCase() : sig.toLowerCase()}`,
    ];
    for (const cursor of forged) {
      const res = await api.get(`${ws.base}/${list}?cursor=${encodeURIComponent(cursor)}`);
      expect([cursor.slice(0, 30), res.status, res.body.error?.code]).toEqual([cursor.slice(0, 30), 422, 'invalid_cursor']);
    }
  });
});

describe('ids in request bodies: integers from 1 to 2^53−1, like path ids', () => {
  const OUT_OF_RANGE: Array<[string, string]> = [
    ['2^53', '9007199254740992'],
    ['2^53+2', '9007199254740994'],
    ['1e20', '1e20'],
    ['a 30-digit number', '1' + '0'.repeat(29)],
    ['0', '0'],
    ['-1', '-1'],
    ['1.5', '1.5'],
    ['a string of digits', '"5"'],
  ];
  const FIELDS: Array<[string, string, string]> = [
    ['invoices', 'purchaser_id', '{"purchaser_id": %}'],
    ['invoices', 'bank_account_id', '{"purchaser_id": P, "bank_account_id": %}'],
    ['credit_notes', 'invoice_id', '{"invoice_id": %}'],
    ['proformas', 'purchaser_id', '{"purchaser_id": %}'],
    ['contacts', 'invoice_account_id', '{"invoice_account_id": %}'],
    ['expenses', 'expense.supplier_id', '{"expense": {"supplier_id": %}}'],
  ];

  it.each(FIELDS)('POST %s: %s out of range → 422 with a code, nothing written', async (segment, field, template) => {
    const before = (await api.get(`${ws.base}/${segment}?limit=100`)).body.data.length;
    for (const [label, literal] of OUT_OF_RANGE) {
      const raw = template.replace('P', String(ws.purchaser)).replace('%', literal);
      const res = await api.request('POST', `${ws.base}/${segment}`, { rawBody: raw, headers: { 'content-type': 'application/json' } });
      expect([label, res.status, res.body.error?.field]).toEqual([label, 422, field]);
      expect(['invalid_value', 'invalid_type']).toContain(res.body.error.code);
    }
    expect((await api.get(`${ws.base}/${segment}?limit=100`)).body.data.length).toBe(before);
  });

  it('PATCH: the same bounds (purchaser_id, bank_account_id, invoice_id)', async () => {
    const invoice = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] });
    const note = await api.post(`${ws.base}/credit_notes`, { purchaser_id: ws.purchaser, line_items: [line()] });
    for (const [path, field] of [
      [`invoices/${invoice.body.id}`, 'purchaser_id'],
      [`invoices/${invoice.body.id}`, 'bank_account_id'],
      [`credit_notes/${note.body.id}`, 'invoice_id'],
    ]) {
      const res = await api.request('PATCH', `${ws.base}/${path}`, { rawBody: `{"${field}": 1e20}`, headers: { 'content-type': 'application/json' } });
      expect([field, res.status, res.body.error?.code]).toEqual([field, 422, 'invalid_value']);
    }
    expect((await api.get(`${ws.base}/invoices/${invoice.body.id}`)).body.updated_at).toBe(invoice.body.updated_at);
  });

  it('the largest id is accepted as an id (and names no record)', async () => {
    const res = await api.post(`${ws.base}/invoices`, { purchaser_id: Number.MAX_SAFE_INTEGER });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('purchaser_not_found');
  });
});

describe('the served document says what the server enforces', () => {
  const schema = (name: string) => served.components.schemas[name];
  const matches = (pattern: string, value: string) => new RegExp(pattern, 'u').test(value);

  it('every id field of every request schema refers to the shared Id bounds', () => {
    const loose: string[] = [];
    const visit = (node: unknown, where: string) => {
      if (!node || typeof node !== 'object') return;
      const record = node as Record<string, unknown>;
      for (const [key, value] of Object.entries(record)) {
        const type = (value as { type?: unknown } | null)?.type;
        if (/(^|_)id$/.test(key) && (type === 'integer' || (Array.isArray(type) && type.includes('integer')))) loose.push(`${where}.${key}`);
        visit(value, `${where}.${key}`);
      }
    };
    for (const [path, item] of Object.entries(served.paths as Record<string, Record<string, { requestBody?: unknown }>>)) {
      for (const [method, op] of Object.entries(item)) if (op?.requestBody) visit(op.requestBody, `${method} ${path}`);
    }
    for (const name of Object.keys(served.components.schemas).filter((n) => /Input$|Create$|Update$/.test(n))) visit(schema(name), name);
    expect(loose).toEqual([]);
    expect(schema('Id')).toMatchObject({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
    expect(served.components.parameters.Id.schema).toEqual({ $ref: '#/components/schemas/Id' });
  });

  it('Idempotency-Key: the pattern and maxLength match what the server refuses with 400', async () => {
    const { pattern, maxLength } = served.components.parameters.IdempotencyKey.schema;
    expect(pattern).toBeDefined();
    // (Leading and trailing spaces are not part of an HTTP field value: clients and servers strip them.)
    const keys = ['a', 'a-uuid-like-key-123', 'with inner space', 'ü-latin1', 'tab\there', 'x'.repeat(255), 'x'.repeat(256), '~!@#$%^&*()'];
    for (const key of keys) {
      // An invalid body: a valid key gets 422 (nothing kept), an invalid one 400.
      const res = await api.request('POST', `${ws.base}/contacts`, {
        rawBody: Buffer.from('{}'),
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
      });
      const documented = key.length <= maxLength && matches(pattern, key);
      expect([JSON.stringify(key), res.status]).toEqual([JSON.stringify(key), documented ? 422 : 400]);
    }
  });

  it('dates: YYYY-MM-DD (a real calendar date); anything else 422', async () => {
    const { pattern } = schema('Date');
    for (const value of ['2026-02-28', '2024-02-29', '2026-02-30', '2026-2-3', '20260203', '2026-02-03T00:00:00Z', '٢٠٢٦-٠٢-٠٣', '+02026-02-03']) {
      const res = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, issue_date: value });
      const fine = matches(pattern, value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
      expect([value, res.status]).toEqual([value, fine ? 201 : 422]);
    }
  });

  it('currencies: three letters (either case); codes that are not ISO 4217 currencies → 422 invalid_currency', async () => {
    const { pattern } = schema('CurrencyCode');
    for (const value of ['EUR', 'eur', 'EURO', 'E1R', 'EU', '€€€', 'QQQ']) {
      const res = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, currency: value, exchange_rate: '25' });
      if (!matches(pattern, value)) expect([value, res.status, res.body.error.code]).toEqual([value, 422, 'invalid_value']);
      else if (value.toUpperCase() === 'QQQ') expect([value, res.status, res.body.error.code]).toEqual([value, 422, 'invalid_currency']);
      else expect([value, res.status, res.body.currency]).toEqual([value, 201, 'EUR']);
    }
  });
});

describe('a path that is not valid percent-encoding: 400 bad_request, as the document lists for every operation with a path parameter', () => {
  // test/support/api.ts fails on a status the operation does not list: this holds the document to it too.
  it.each([
    ['GET', 'contacts/%zz'],
    ['DELETE', 'invoices/%E0%A4%A'],
    ['GET', 'invoices/%ff%fe/pdf'],
  ])('%s …/%s', async (method, path) => {
    const res = await api.request(method, `${ws.base}/${path}`);
    expect([res.status, res.body.error?.code]).toEqual([400, 'bad_request']);
  });
});
