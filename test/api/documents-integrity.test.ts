// Issued documents stay what was issued and every document refers to something that exists: credit
// notes keep their invoice, snapshots are frozen, credit lines are positive, currencies are money,
// numbers are unique, and the proforma flow of spec §3 (issued, paid, converted). Races behind these
// rules are driven in test/unit/documents-races.test.ts.
import { Api } from '../support/api';
import { docsWorkspace, DocsWorkspace, line, setDocumentSettings } from '../support/documents';
import { tokenFor } from '../support/fixtures';
import { startSystem, System } from '../support/system';

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

const today = () => new Date().toISOString().slice(0, 10);

const create = async (segment: string, body: Record<string, unknown> = {}, on: DocsWorkspace = ws) => {
  const res = await on.api.post(`${on.base}/${segment}`, { purchaser_id: on.purchaser, line_items: [line()], ...body });
  if (res.status !== 201) throw new Error(`create ${segment}: ${res.status} ${res.text}`);
  return res.body;
};
const post = (path: string, body?: unknown, on: DocsWorkspace = ws) => on.api.post(`${on.base}/${path}`, body);
const issued = async (segment: 'invoices' | 'credit_notes', body: Record<string, unknown> = {}, on: DocsWorkspace = ws) => {
  const doc = await create(segment, body, on);
  const res = await post(`${segment}/${doc.id}/issue`, undefined, on);
  if (res.status !== 200) throw new Error(`issue: ${res.status} ${res.text}`);
  return res.body;
};

describe('DELETE invoices/<id> with credit notes', () => {
  it('422 invoice_has_credit_notes once a credit note is issued against it (the note keeps pointing at it); a draft note does not hold it', async () => {
    const invoice = await issued('invoices');
    const note = await issued('credit_notes', { invoice_id: invoice.id, line_items: [line('10')] });
    const refused = await api.delete(`${ws.base}/invoices/${invoice.id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('invoice_has_credit_notes');
    expect((await api.get(`${ws.base}/invoices/${invoice.id}`)).status).toBe(200);
    expect((await api.get(`${ws.base}/credit_notes/${note.id}`)).body.invoice).toEqual({ id: invoice.id, number: invoice.number, status: 'exposed' });

    const other = await issued('invoices');
    await create('credit_notes', { invoice_id: other.id, line_items: [line('10')] });
    expect((await api.delete(`${ws.base}/invoices/${other.id}`)).status).toBe(204);
  });
});

describe('PATCH of an issued invoice', () => {
  it('sending the unchanged purchaser_id back keeps the buyer as issued, whatever the contact says now', async () => {
    const purchaser = await ws.api.post(`${ws.base}/contacts`, { name: 'Frozen a.s.', invoice_account: { name: 'Frozen a.s.' } });
    const invoice = await issued('invoices', { purchaser_id: purchaser.body.invoice_account_id });
    const renamed = await api.patch(`${ws.base}/contacts/${purchaser.body.id}`, { invoice_account: { name: 'Renamed a.s.' } });
    expect(renamed.status).toBe(200);
    const patched = await api.patch(`${ws.base}/invoices/${invoice.id}`, { purchaser_id: purchaser.body.invoice_account_id, pdf_language: 'en' });
    expect(patched.status).toBe(200);
    expect(patched.body.purchaser.name).toBe('Frozen a.s.');
    expect((await api.get(`${ws.base}/invoices/${invoice.id}`)).body.purchaser).toEqual(invoice.purchaser);
  });
});

describe('paid documents keep their payment date', () => {
  it('PATCH paid_on: null on a paid invoice or a paid proforma → 422 paid_on_required; the date stays', async () => {
    const invoice = await issued('invoices');
    await post(`invoices/${invoice.id}/mark_paid`);
    const cleared = await api.patch(`${ws.base}/invoices/${invoice.id}`, { paid_on: null });
    expect(cleared.status).toBe(422);
    expect(cleared.body.error).toMatchObject({ code: 'paid_on_required', field: 'paid_on' });
    expect((await api.get(`${ws.base}/invoices/${invoice.id}`)).body).toMatchObject({ status: 'paid', paid_on: today() });

    const proforma = await create('proformas');
    await post(`proformas/${proforma.id}/issue`);
    await post(`proformas/${proforma.id}/mark_paid`);
    expect((await api.patch(`${ws.base}/proformas/${proforma.id}`, { paid_on: null })).body.error.code).toBe('paid_on_required');
    // A date not yet paid may still be cleared (it was set ahead of mark_paid).
    const draft = await create('invoices', { paid_on: '2026-01-05' });
    expect((await api.patch(`${ws.base}/invoices/${draft.id}`, { paid_on: null })).body.paid_on).toBeNull();
  });
});

describe('absent values in printed copies are null', () => {
  it('a bank account snapshot without a name prints name null, like the bank account itself', async () => {
    const bank = await api.post(`${ws.base}/bank_accounts`, { iban: 'DE89370400440532013000' });
    expect(bank.status).toBe(201);
    expect(bank.body.name).toBeNull();
    const invoice = await create('invoices', { bank_account_id: bank.body.id });
    expect(invoice.bank_account).toMatchObject({ id: bank.body.id, name: null, iban: 'DE89370400440532013000' });
  });
});

describe('credit notes of an invoice with deductions (negative lines)', () => {
  it('a full credit nets the lines per VAT rate: positive lines, the invoice totals exactly, and it can be issued', async () => {
    const invoice = await issued('invoices', {
      line_items: [line('100', '21', '3', 'Consulting'), line('-30', '21', '1', 'Loyalty discount'), line('50', '12', '1', 'Book')],
    });
    expect(invoice.total).toBe('382.70');
    const res = await post('credit_notes', { invoice_id: invoice.id });
    expect(res.status).toBe(201);
    expect(res.body.line_items.map((l: { unit_price: string; vat_rate: string; quantity: string }) => [l.quantity, l.unit_price, l.vat_rate])).toEqual([
      ['1', '270.00', '21'],
      ['1', '50.00', '12'],
    ]);
    expect(res.body.line_items[0].name).toBe(`Faktura ${invoice.number}`);
    expect({ subtotal: res.body.subtotal, vat_total: res.body.vat_total, total: res.body.total }).toEqual({
      subtotal: invoice.subtotal,
      vat_total: invoice.vat_total,
      total: invoice.total,
    });
    // Its lines are what the API itself accepts for a credit note.
    expect((await api.patch(`${ws.base}/credit_notes/${res.body.id}`, { line_items: res.body.line_items.map(({ name, quantity, unit_price, vat_rate }: Record<string, string>) => ({ name, quantity, unit_price, vat_rate })) })).status).toBe(200);
    expect((await post(`credit_notes/${res.body.id}/issue`)).status).toBe(200);
    expect((await api.get(`${ws.base}/invoices/${invoice.id}`)).body).toMatchObject({ credited_amount: '382.70', amount_due: '0.00' });
  });

  it('422 negative_line_items when a VAT rate nets below zero (send the lines instead)', async () => {
    const invoice = await issued('invoices', { line_items: [line('100', '21'), line('-10', '0', '1', 'Deposit')] });
    const res = await post('credit_notes', { invoice_id: invoice.id });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'negative_line_items', field: 'line_items' });
    expect((await post('credit_notes', { invoice_id: invoice.id, line_items: [line('10')] })).status).toBe(201);
  });
});

describe('document currencies', () => {
  it.each(['XXX', 'XTS', 'XAU', 'XDR', 'XAG', 'CHE', 'USN'])('%s is not money: 422 invalid_currency on create and update', async (code) => {
    const created = await ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, currency: code, exchange_rate: '1' });
    expect(created.status).toBe(422);
    expect(created.body.error).toMatchObject({ code: 'invalid_currency', field: 'currency' });
    const draft = await create('proformas');
    const patched = await api.patch(`${ws.base}/proformas/${draft.id}`, { currency: code, exchange_rate: '1' });
    expect(patched.status).toBe(422);
    expect(patched.body.error.code).toBe('invalid_currency');
  });
});

describe('number uniqueness across number formats', () => {
  it('a format printing a number another invoice has → 422 number_taken; the draft stays a draft', async () => {
    const fresh = await docsWorkspace(system);
    await setDocumentSettings(system, fresh.id, { number_format: 'YYN' });
    expect((await issued('invoices', { issue_date: '2012-06-01' }, fresh)).number).toBe('121');
    await setDocumentSettings(system, fresh.id, { number_format: 'NYY' });
    const draft = await create('invoices', { issue_date: '2021-06-01' }, fresh);
    const refused = await post(`invoices/${draft.id}/issue`, undefined, fresh);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('number_taken');
    expect((await fresh.api.get(`${fresh.base}/invoices/${draft.id}`)).body).toMatchObject({ status: 'draft', number: null });
  });
});

describe('proformas: issued, paid by the customer, then converted (spec §3)', () => {
  it('POST proformas/<id>/issue: open → exposed with issued_at; locked; again → 422 not_draft', async () => {
    const proforma = await create('proformas');
    const res = await post(`proformas/${proforma.id}/issue`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'exposed', number: proforma.number, amount_due: proforma.total, paid_on: null });
    expect(res.body.issued_at).not.toBeNull();
    expect((await post(`proformas/${proforma.id}/issue`)).body.error.code).toBe('not_draft');
    expect((await api.patch(`${ws.base}/proformas/${proforma.id}`, { note: 'changed' })).body.error.code).toBe('document_locked');
    const empty = await create('proformas', { line_items: [] });
    expect((await post(`proformas/${empty.id}/issue`)).body.error.code).toBe('no_line_items');
  });

  it('POST proformas/<id>/mark_paid: exposed → paid (paid_on today, amount_due 0); again → 200 unchanged; open → 422 proforma_not_issued', async () => {
    const open = await create('proformas');
    const notIssued = await post(`proformas/${open.id}/mark_paid`);
    expect(notIssued.status).toBe(422);
    expect(notIssued.body.error.code).toBe('proforma_not_issued');
    await post(`proformas/${open.id}/issue`);
    const paid = await post(`proformas/${open.id}/mark_paid`);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ status: 'paid', paid_on: today(), amount_due: '0.00' });
    const again = await post(`proformas/${open.id}/mark_paid`);
    expect(again.body).toMatchObject({ status: 'paid', paid_on: today(), updated_at: paid.body.updated_at });
    const refused = await api.delete(`${ws.base}/proformas/${open.id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('proforma_has_payments');
  });

  it('converting a paid proforma yields a paid invoice with the proforma paid_on', async () => {
    const proforma = await create('proformas', { paid_on: '2026-01-05' });
    await post(`proformas/${proforma.id}/issue`);
    expect((await post(`proformas/${proforma.id}/mark_paid`)).body.paid_on).toBe('2026-01-05');
    const converted = await post(`proformas/${proforma.id}/convert_to_invoice`);
    expect(converted.status).toBe(201);
    expect(converted.body).toMatchObject({ status: 'paid', paid_on: '2026-01-05', amount_due: '0.00', proforma_id: proforma.id });
    expect(converted.body.number).not.toBeNull();
    const after = (await api.get(`${ws.base}/proformas/${proforma.id}`)).body;
    expect(after).toMatchObject({ status: 'converted', paid_on: '2026-01-05', amount_due: '0.00' });
    expect((await post(`proformas/${proforma.id}/mark_paid`)).body.error.code).toBe('proforma_already_converted');
  });

  it('an issued, unpaid proforma converts to an unpaid invoice', async () => {
    const proforma = await create('proformas');
    expect((await post(`proformas/${proforma.id}/issue`)).status).toBe(200);
    const converted = await post(`proformas/${proforma.id}/convert_to_invoice`);
    expect(converted.body).toMatchObject({ status: 'exposed', paid_on: null, amount_due: proforma.total });
  });

  it('issue and mark_paid need manage:proformas; 404 for another type', async () => {
    const writer = await tokenFor(system, 'pat', ws.ownerEmail, 'write:proformas,manage:invoices');
    const proforma = await create('proformas');
    for (const action of ['issue', 'mark_paid']) {
      const res = await api.post(`${ws.base}/proformas/${proforma.id}/${action}`, undefined, { token: writer });
      expect({ action, status: res.status, scope: res.body.error.required_scope }).toEqual({ action, status: 403, scope: 'manage:proformas' });
    }
    const invoice = await create('invoices');
    expect((await post(`proformas/${invoice.id}/issue`)).status).toBe(404);
    expect((await post(`proformas/${invoice.id}/mark_paid`)).status).toBe(404);
  });
});
