// Spec §2–§4 documents: create/read/update/delete and lists of invoices, credit notes, proformas and
// quotes; type isolation, totals, snapshots, validation, scopes. Lifecycles: documents-lifecycle.test.ts.
import { Api } from '../support/api';
import { tokenFor } from '../support/fixtures';
import { startSystem, System } from '../support/system';
import { CZ_SUPPLIER, docsWorkspace, DocsWorkspace, line } from '../support/documents';

let system: System;
let ws: DocsWorkspace;
let api: Api;

beforeAll(async () => {
  // Private: its issued and paid documents queue PDF pre-renders (≈ 1 s of Chromium each) that a shared
  // system would still be rendering while the next file runs (docs/testing.md).
  system = await startSystem({ private: true });
  ws = await docsWorkspace(system);
  api = ws.api;
});
afterAll(() => system?.stop());

const SEGMENTS = ['invoices', 'credit_notes', 'proformas', 'quotes'] as const;
const TYPE_OF = { invoices: 'invoice', credit_notes: 'credit_note', proformas: 'proforma', quotes: 'quote' } as const;

const create = async (segment: string, body: Record<string, unknown> = {}) => {
  const res = await api.post(`${ws.base}/${segment}`, { purchaser_id: ws.purchaser, line_items: [line()], ...body });
  if (res.status !== 201) throw new Error(`create ${segment}: ${res.status} ${res.text}`);
  return res.body;
};

describe('POST /accounts/<id>/{invoices,credit_notes,proformas,quotes}', () => {
  it.each(SEGMENTS)('creates a %s with type from the route, 201', async (segment) => {
    const res = await api.post(`${ws.base}/${segment}`, { purchaser_id: ws.purchaser, line_items: [line('100', '21', '2')] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: TYPE_OF[segment],
      purchaser_id: ws.purchaser,
      currency: 'CZK',
      exchange_rate: '1',
      pdf_language: 'cs',
      subtotal: '200.00',
      vat_total: '42.00',
      total: '242.00',
      vat_breakdown: [{ vat_rate: '21', base: '200.00', vat: '42.00' }],
      deleted: null,
    });
    expect(res.body.status).toBe(segment === 'proformas' || segment === 'quotes' ? 'open' : 'draft');
  });

  it('fills defaults: issue_date today, due_date +14 days, delivery_date = issue_date', async () => {
    const doc = await create('invoices', { issue_date: '2026-01-10' });
    expect(doc).toMatchObject({ issue_date: '2026-01-10', due_date: '2026-01-24', delivery_date: '2026-01-10', number: null, status: 'draft' });
    const today = new Date().toISOString().slice(0, 10);
    expect((await create('invoices')).issue_date).toBe(today);
  });

  it('takes every field of the flat body and returns money as decimal strings', async () => {
    const bank = await api.post(`${ws.base}/bank_accounts`, { name: 'Main', iban: 'CZ6508000000192000145399' });
    expect(bank.status).toBe(201);
    const res = await api.post(`${ws.base}/invoices`, {
      purchaser_id: ws.purchaser,
      issue_date: '2026-02-01',
      due_date: '2026-02-28',
      delivery_date: '2026-01-31',
      currency: 'EUR',
      exchange_rate: '25.125',
      pdf_language: 'en',
      variable_symbol: '20260001',
      bank_account_id: bank.body.id,
      note: 'Thank you',
      line_items: [{ name: 'Widget', description: 'Blue', quantity: 3, unit: 'pcs', unit_price: 9.99, vat_rate: 21, discount: 10 }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      issue_date: '2026-02-01',
      due_date: '2026-02-28',
      delivery_date: '2026-01-31',
      currency: 'EUR',
      exchange_rate: '25.125',
      pdf_language: 'en',
      variable_symbol: '20260001',
      bank_account_id: bank.body.id,
      bank_account: { id: bank.body.id, iban: 'CZ6508000000192000145399' },
      note: 'Thank you',
      line_items: [{ name: 'Widget', description: 'Blue', quantity: '3', unit: 'pcs', unit_price: '9.99', vat_rate: '21', discount: '10', net_amount: '26.97' }],
      subtotal: '26.97',
      vat_total: '5.66',
      total: '32.63',
      amount_due: '32.63',
    });
  });

  it('snapshots the supplier (the workspace legal identity) and the purchaser', async () => {
    const doc = await create('invoices');
    expect(doc.supplier).toMatchObject({ name: CZ_SUPPLIER.name, vat_id: CZ_SUPPLIER.vat_id, registration_id: CZ_SUPPLIER.registration_id });
    expect(doc.supplier.address).toMatchObject({ municipality: 'Praha', country_alpha2: 'cz' });
    expect(doc.purchaser).toMatchObject({ name: 'Customer a.s.', email: 'ap@customer.example' });
  });

  it('422 purchaser_not_found for an unknown legal entity, a contact id is not a purchaser id', async () => {
    const res = await api.post(`${ws.base}/invoices`, { purchaser_id: 999_999, line_items: [line()] });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'purchaser_not_found', field: 'purchaser_id' });
    // Another workspace's legal entity is not visible either.
    const other = await docsWorkspace(system);
    const foreign = await api.post(`${ws.base}/invoices`, { purchaser_id: other.purchaser, line_items: [line()] });
    expect(foreign.status).toBe(422);
  });

  it('422 without purchaser_id, for a type in the body, and for read-only fields', async () => {
    expect((await api.post(`${ws.base}/invoices`, { line_items: [line()] })).body.error.code).toBe('missing_field');
    for (const field of [{ type: 'credit_note' }, { status: 'paid' }, { number: '1' }, { total: '1.00' }, { id: 5 }]) {
      const res = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, ...field });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('unknown_field');
    }
  });

  it('422 for malformed money, dates, currency and rates', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ line_items: [{ name: 'x', unit_price: '1e5' }] }, 'line_items[0].unit_price'],
      [{ line_items: [{ name: 'x', unit_price: '12,50' }] }, 'line_items[0].unit_price'],
      [{ line_items: [{ name: 'x', unit_price: '1.1234567' }] }, 'line_items[0].unit_price'],
      [{ line_items: [{ name: 'x', unit_price: '1', quantity: '0' }] }, 'line_items[0].quantity'],
      [{ line_items: [{ name: 'x', unit_price: '1', vat_rate: '-1' }] }, 'line_items[0].vat_rate'],
      [{ line_items: [{ name: 'x', unit_price: '1', discount: '150' }] }, 'line_items[0].discount'],
      [{ currency: 'XYZ' }, 'currency'],
      [{ currency: 'EUR' }, 'exchange_rate'],
      [{ exchange_rate: '2' }, 'exchange_rate'],
      [{ currency: 'EUR', exchange_rate: '0' }, 'exchange_rate'],
      [{ issue_date: '2026-02-30' }, 'issue_date'],
      [{ issue_date: '2026-03-10', due_date: '2026-03-01' }, 'due_date'],
      [{ line_items: [{ name: 'x', unit_price: '-10' }, { name: 'y', unit_price: '5' }] }, 'line_items'],
    ];
    for (const [body, field] of cases) {
      const res = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, ...body });
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect({ body, field: res.body.error.field }).toEqual({ body, field });
    }
  });

  it('422 for an unknown bank account and an invalid pdf_language', async () => {
    expect((await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, bank_account_id: 987_654 })).body.error.code).toBe('bank_account_not_found');
    expect((await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, pdf_language: 'xx' })).status).toBe(422);
  });

  it('a foreign currency needs an exchange rate; the workspace currency has rate 1', async () => {
    const eur = await create('invoices', { currency: 'eur', exchange_rate: 25 });
    expect(eur).toMatchObject({ currency: 'EUR', exchange_rate: '25' });
    expect(await create('invoices', { currency: 'CZK', exchange_rate: '1' })).toMatchObject({ exchange_rate: '1' });
  });
});

describe('totals (exact to the cent, VAT rounded per rate)', () => {
  const totals = async (line_items: unknown[], currency?: Record<string, unknown>) => {
    const doc = await create('invoices', { line_items, ...currency });
    return { subtotal: doc.subtotal, vat_total: doc.vat_total, total: doc.total, vat_breakdown: doc.vat_breakdown };
  };

  it('0.1 + 0.2 (JSON numbers and strings) = 0.30', async () => {
    expect(await totals([{ name: 'a', unit_price: 0.1 }, { name: 'b', unit_price: '0.2' }])).toMatchObject({ subtotal: '0.30', total: '0.30' });
  });

  it('3-decimal unit prices round per line, half away from zero', async () => {
    expect(await totals([{ name: 'a', unit_price: '0.335', quantity: 3 }])).toMatchObject({ subtotal: '1.01', total: '1.01' });
    expect(await totals([{ name: 'a', unit_price: '0.125', quantity: '1' }])).toMatchObject({ subtotal: '0.13' });
  });

  it('many lines at zero, reduced and standard rates', async () => {
    const lines = Array.from({ length: 150 }, (_, i) => ({ name: `l${i}`, quantity: '1.5', unit_price: '0.333', vat_rate: ['0', '12', '21'][i % 3] }));
    expect(await totals(lines)).toEqual({
      subtotal: '75.00',
      vat_total: '8.25',
      total: '83.25',
      vat_breakdown: [
        { vat_rate: '21', base: '25.00', vat: '5.25' },
        { vat_rate: '12', base: '25.00', vat: '3.00' },
        { vat_rate: '0', base: '25.00', vat: '0.00' },
      ],
    });
  });

  it('VAT per rate on the document, not per line (10 × 0.05 at 21 % → 0.11)', async () => {
    const lines = Array.from({ length: 10 }, (_, i) => ({ name: `l${i}`, unit_price: '0.05', vat_rate: '21' }));
    expect(await totals(lines)).toMatchObject({ subtotal: '0.50', vat_total: '0.11', total: '0.61' });
  });

  it('a zero-decimal currency is exact to its unit', async () => {
    expect(await totals([{ name: 'a', unit_price: '33.5', quantity: 3, vat_rate: 10 }], { currency: 'JPY', exchange_rate: '0.15' })).toMatchObject({
      subtotal: '101',
      vat_total: '10',
      total: '111',
    });
  });
});

describe('GET /accounts/<id>/<type>/<id> and type isolation', () => {
  it('reads a document of its own type; another type at this URL → 404', async () => {
    const ids: Record<string, number> = {};
    for (const segment of SEGMENTS) ids[segment] = (await create(segment)).id;
    for (const segment of SEGMENTS) {
      expect((await api.get(`${ws.base}/${segment}/${ids[segment]}`)).status).toBe(200);
      for (const other of SEGMENTS.filter((s) => s !== segment)) {
        const res = await api.get(`${ws.base}/${other}/${ids[segment]}`);
        expect({ segment, other, status: res.status }).toEqual({ segment, other, status: 404 });
      }
    }
  });

  it('ids are one space across types', async () => {
    const ids = [];
    for (const segment of SEGMENTS) ids.push((await create(segment)).id);
    expect(new Set(ids).size).toBe(4);
  });

  it('404 for unknown ids, malformed ids and other workspaces', async () => {
    expect((await api.get(`${ws.base}/invoices/999999999`)).status).toBe(404);
    expect((await api.get(`${ws.base}/invoices/abc`)).status).toBe(404);
    const other = await docsWorkspace(system);
    const doc = await create('invoices');
    expect((await other.api.get(`${other.base}/invoices/${doc.id}`)).status).toBe(404);
  });
});

describe('GET /accounts/<id>/<type> (lists)', () => {
  it('lists only its own type, id descending, with keyset pagination', async () => {
    const fresh = await docsWorkspace(system);
    const made: number[] = [];
    for (let i = 0; i < 5; i++) {
      made.push((await fresh.api.post(`${fresh.base}/quotes`, { purchaser_id: fresh.purchaser })).body.id);
      await fresh.api.post(`${fresh.base}/invoices`, { purchaser_id: fresh.purchaser });
    }
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const res = await fresh.api.get(`${fresh.base}/quotes?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.data.every((d: { type: string }) => d.type === 'quote')).toBe(true);
      seen.push(...res.body.data.map((d: { id: number }) => d.id));
      cursor = res.body.next_cursor;
      expect(res.body.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual([...made].reverse());
  });

  it('a new document does not shift the pages (keyset)', async () => {
    const fresh = await docsWorkspace(system);
    for (let i = 0; i < 3; i++) await fresh.api.post(`${fresh.base}/proformas`, { purchaser_id: fresh.purchaser });
    const first = await fresh.api.get(`${fresh.base}/proformas?limit=2`);
    await fresh.api.post(`${fresh.base}/proformas`, { purchaser_id: fresh.purchaser });
    const second = await fresh.api.get(`${fresh.base}/proformas?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.has_more).toBe(false);
  });

  it('422 for a bad limit or cursor; a cursor of another list is refused', async () => {
    expect((await api.get(`${ws.base}/invoices?limit=101`)).body.error.code).toBe('invalid_limit');
    expect((await api.get(`${ws.base}/invoices?cursor=forged`)).body.error.code).toBe('invalid_cursor');
    await create('quotes');
    await create('quotes');
    const quotes = await api.get(`${ws.base}/quotes?limit=1`);
    expect((await api.get(`${ws.base}/invoices?cursor=${encodeURIComponent(quotes.body.next_cursor)}`)).body.error.code).toBe('invalid_cursor');
  });

  it('deleted documents are excluded', async () => {
    const fresh = await docsWorkspace(system);
    const a = await fresh.api.post(`${fresh.base}/invoices`, { purchaser_id: fresh.purchaser });
    const b = await fresh.api.post(`${fresh.base}/invoices`, { purchaser_id: fresh.purchaser });
    expect((await fresh.api.delete(`${fresh.base}/invoices/${a.body.id}`)).status).toBe(204);
    expect((await fresh.api.get(`${fresh.base}/invoices`)).body.data.map((d: { id: number }) => d.id)).toEqual([b.body.id]);
  });
});

describe('PATCH /accounts/<id>/<type>/<id>', () => {
  it('updates a draft partially and recomputes totals', async () => {
    const doc = await create('invoices');
    const res = await api.patch(`${ws.base}/invoices/${doc.id}`, { note: 'Hi', line_items: [line('50', '12', '2')] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ note: 'Hi', subtotal: '100.00', vat_total: '12.00', total: '112.00', purchaser_id: ws.purchaser });
    const cleared = await api.patch(`${ws.base}/invoices/${doc.id}`, { note: null, due_date: null });
    expect(cleared.body).toMatchObject({ note: null, due_date: null, total: '112.00' });
  });

  it('re-points the purchaser and refreshes its snapshot', async () => {
    const doc = await create('quotes');
    const res = await api.patch(`${ws.base}/quotes/${doc.id}`, { purchaser_id: ws.purchaserNoMail });
    expect(res.body).toMatchObject({ purchaser_id: ws.purchaserNoMail, purchaser: { name: 'Silent Ltd', email: null } });
  });

  it('422 unknown_field for type (never changes) and read-only fields', async () => {
    const doc = await create('proformas');
    for (const body of [{ type: 'invoice' }, { status: 'converted' }, { amount_due: '0' }]) {
      const res = await api.patch(`${ws.base}/proformas/${doc.id}`, body);
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('unknown_field');
    }
    expect((await api.get(`${ws.base}/proformas/${doc.id}`)).body.type).toBe('proforma');
  });

  it('paid_on belongs to invoices, invoice_id to credit notes', async () => {
    const quote = await create('quotes');
    expect((await api.patch(`${ws.base}/quotes/${quote.id}`, { paid_on: '2026-01-01' })).body.error.code).toBe('unknown_field');
    expect((await api.patch(`${ws.base}/quotes/${quote.id}`, { invoice_id: 1 })).body.error.code).toBe('unknown_field');
  });

  it('an issued invoice keeps every printed field: changing one → 422 document_locked; pdf_language and paid_on may change', async () => {
    const doc = await create('invoices');
    expect((await api.post(`${ws.base}/invoices/${doc.id}/issue`)).status).toBe(200);
    for (const body of [
      { line_items: [line('1')] },
      { purchaser_id: ws.purchaserNoMail },
      { issue_date: '2020-01-01' },
      { delivery_date: '2020-01-01' },
      { currency: 'EUR', exchange_rate: '25' },
      { due_date: '2030-01-01' },
      { note: 'Paid by card' },
      { variable_symbol: '123' },
    ]) {
      const res = await api.patch(`${ws.base}/invoices/${doc.id}`, body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 422, code: 'document_locked' });
    }
    const ok = await api.patch(`${ws.base}/invoices/${doc.id}`, { pdf_language: 'en', paid_on: '2026-01-05' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ pdf_language: 'en', paid_on: '2026-01-05', status: 'exposed' });
    // Sending the unchanged fiscal content back is not a change.
    const same = await api.patch(`${ws.base}/invoices/${doc.id}`, { purchaser_id: ws.purchaser, line_items: [line()], currency: 'CZK' });
    expect(same.status).toBe(200);
    expect(same.body.total).toBe(doc.total);
  });

  it('404 for another type and for deleted documents', async () => {
    const doc = await create('invoices');
    expect((await api.patch(`${ws.base}/credit_notes/${doc.id}`, { note: 'x' })).status).toBe(404);
    await api.delete(`${ws.base}/invoices/${doc.id}`);
    expect((await api.patch(`${ws.base}/invoices/${doc.id}`, { note: 'x' })).status).toBe(404);
  });
});

describe('DELETE /accounts/<id>/<type>/<id> (soft)', () => {
  it('204, then 404 on read, update and delete', async () => {
    for (const segment of SEGMENTS) {
      const doc = await create(segment);
      expect((await api.delete(`${ws.base}/${segment}/${doc.id}`)).status).toBe(204);
      expect((await api.get(`${ws.base}/${segment}/${doc.id}`)).status).toBe(404);
      expect((await api.delete(`${ws.base}/${segment}/${doc.id}`)).status).toBe(404);
    }
  });

  it('404 for another type', async () => {
    const doc = await create('quotes');
    expect((await api.delete(`${ws.base}/proformas/${doc.id}`)).status).toBe(404);
    expect((await api.get(`${ws.base}/quotes/${doc.id}`)).status).toBe(200);
  });

  it('an issued, unpaid invoice may be deleted (delete and recreate); a paid one → 422 invoice_has_payments', async () => {
    const issued = await create('invoices');
    await api.post(`${ws.base}/invoices/${issued.id}/issue`);
    expect((await api.delete(`${ws.base}/invoices/${issued.id}`)).status).toBe(204);
    const paid = await create('invoices');
    await api.post(`${ws.base}/invoices/${paid.id}/issue`);
    await api.post(`${ws.base}/invoices/${paid.id}/mark_paid`);
    const res = await api.delete(`${ws.base}/invoices/${paid.id}`);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('invoice_has_payments');
  });
});

describe('scopes (§5)', () => {
  it('read:<type> reads, write:<type> creates/updates/deletes, actions need manage:<type>', async () => {
    const reader = await tokenFor(system, 'pat', ws.ownerEmail, 'read:invoices');
    // Creating from a purchaser copies its details: read:contacts too (docs/decisions.md, scopes).
    const writer = await tokenFor(system, 'pat', ws.ownerEmail, 'write:invoices,read:contacts');
    const manager = await tokenFor(system, 'pat', ws.ownerEmail, 'manage:invoices');
    expect((await api.get(`${ws.base}/invoices`, { token: reader })).status).toBe(200);
    const denied = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser }, { token: reader });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'insufficient_scope', required_scope: 'write:invoices' });
    const made = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] }, { token: writer });
    expect(made.status).toBe(201);
    expect((await api.patch(`${ws.base}/invoices/${made.body.id}`, { note: 'x' }, { token: writer })).status).toBe(200);
    for (const action of ['issue', 'send', 'mark_paid']) {
      const res = await api.post(`${ws.base}/invoices/${made.body.id}/${action}`, undefined, { token: writer });
      expect({ action, status: res.status, scope: res.body.error.required_scope }).toEqual({ action, status: 403, scope: 'manage:invoices' });
    }
    expect((await api.post(`${ws.base}/invoices/${made.body.id}/issue`, undefined, { token: manager })).status).toBe(200);
    expect((await api.get(`${ws.base}/credit_notes`, { token: manager })).status).toBe(403);
  });

  it('credit note issue needs manage:credit_notes, convert manage:proformas, accept manage:quotes', async () => {
    const invoicesOnly = await tokenFor(system, 'pat', ws.ownerEmail, 'manage:invoices,write:credit_notes,write:proformas,write:quotes');
    const note = await create('credit_notes');
    const proforma = await create('proformas');
    const quote = await create('quotes');
    const checks: Array<[string, string]> = [
      [`credit_notes/${note.id}/issue`, 'manage:credit_notes'],
      [`proformas/${proforma.id}/convert_to_invoice`, 'manage:proformas'],
      [`quotes/${quote.id}/accept`, 'manage:quotes'],
      [`quotes/${quote.id}/convert_to_invoice`, 'manage:quotes'],
    ];
    for (const [path, scope] of checks) {
      const res = await api.post(`${ws.base}/${path}`, undefined, { token: invoicesOnly });
      expect({ path, status: res.status, scope: res.body.error.required_scope }).toEqual({ path, status: 403, scope });
    }
  });
});

describe('sandbox (test workspace tokens)', () => {
  it('test-mode documents are invisible to live credentials and numbered separately', async () => {
    const testToken = await tokenFor(system, 'test', ws.id, 'manage:invoices,read:contacts');
    const testPurchaser = await api.post(`${ws.base}/contacts`, { name: 'Sandbox', invoice_account: { name: 'Sandbox buyer' } }, { token: await tokenFor(system, 'test', ws.id, 'write:contacts') });
    const made = await api.post(`${ws.base}/invoices`, { purchaser_id: testPurchaser.body.invoice_account_id, line_items: [line()] }, { token: testToken });
    expect(made.status).toBe(201);
    expect((await api.get(`${ws.base}/invoices/${made.body.id}`)).status).toBe(404);
    // A live purchaser is not visible to the sandbox.
    expect((await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser }, { token: testToken })).status).toBe(422);
    const issued = await api.post(`${ws.base}/invoices/${made.body.id}/issue`, undefined, { token: testToken });
    expect(issued.body.number).toMatch(/^\d{4}000001$/);
  });
});

describe('workspace without a legal identity', () => {
  it('uses the workspace name as supplier, EUR and English', async () => {
    const personal = await docsWorkspace(system, null);
    const res = await personal.api.post(`${personal.base}/invoices`, { purchaser_id: personal.purchaser });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ supplier: { name: 'ACME s.r.o.', vat_id: null }, currency: 'EUR', pdf_language: 'en' });
  });
});
