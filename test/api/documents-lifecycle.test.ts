// Spec §3 lifecycles: issue (invoices, credit notes) with gapless numbers, mark_paid, send, credit notes
// against their invoice, proforma → invoice, quote accept and conversion; delete refusals of §4.
import { Api } from '../support/api';
import { startSystem, System } from '../support/system';
import { docsWorkspace, DocsWorkspace, line, setDocumentSettings } from '../support/documents';

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

const year = new Date().getUTCFullYear();

const create = async (segment: string, body: Record<string, unknown> = {}, on: DocsWorkspace = ws) => {
  const res = await on.api.post(`${on.base}/${segment}`, { purchaser_id: on.purchaser, line_items: [line()], ...body });
  if (res.status !== 201) throw new Error(`create ${segment}: ${res.status} ${res.text}`);
  return res.body;
};
const post = (path: string, body?: unknown, on: DocsWorkspace = ws) => on.api.post(`${on.base}/${path}`, body);
const issuedInvoice = async (body: Record<string, unknown> = {}, on: DocsWorkspace = ws) => {
  const doc = await create('invoices', body, on);
  const res = await post(`invoices/${doc.id}/issue`, undefined, on);
  if (res.status !== 200) throw new Error(`issue: ${res.status} ${res.text}`);
  return res.body;
};

describe('POST invoices/<id>/issue', () => {
  it('draft → exposed with the next number of the year (default format YYYYNNNNNN)', async () => {
    const fresh = await docsWorkspace(system);
    const a = await create('invoices', {}, fresh);
    const b = await create('invoices', {}, fresh);
    const first = await post(`invoices/${b.id}/issue`, undefined, fresh);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'exposed', number: `${year}000001` });
    expect(first.body.issued_at).not.toBeNull();
    expect((await post(`invoices/${a.id}/issue`, undefined, fresh)).body.number).toBe(`${year}000002`);
  });

  it('422 not_draft for an issued or paid invoice, which stays unchanged', async () => {
    const inv = await issuedInvoice();
    const again = await post(`invoices/${inv.id}/issue`);
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('not_draft');
    await post(`invoices/${inv.id}/mark_paid`);
    expect((await post(`invoices/${inv.id}/issue`)).status).toBe(422);
    expect((await api.get(`${ws.base}/invoices/${inv.id}`)).body).toMatchObject({ status: 'paid', number: inv.number });
  });

  it('422 no_line_items for an empty draft; 404 for another type or a deleted invoice', async () => {
    const empty = await create('invoices', { line_items: [] });
    expect((await post(`invoices/${empty.id}/issue`)).body.error.code).toBe('no_line_items');
    const quote = await create('quotes');
    expect((await post(`invoices/${quote.id}/issue`)).status).toBe(404);
    const gone = await create('invoices');
    await api.delete(`${ws.base}/invoices/${gone.id}`);
    expect((await post(`invoices/${gone.id}/issue`)).status).toBe(404);
  });

  it('numbers in the workspace number format, per year of issue_date', async () => {
    const fresh = await docsWorkspace(system);
    await setDocumentSettings(system, fresh.id, { number_format: 'FV-YYYY-NNNN' });
    expect((await issuedInvoice({}, fresh)).number).toBe(`FV-${year}-0001`);
    expect((await issuedInvoice({ issue_date: '2024-06-30' }, fresh)).number).toBe('FV-2024-0001');
    expect((await issuedInvoice({}, fresh)).number).toBe(`FV-${year}-0002`);
  });

  it('refreshes the purchaser snapshot at issue, then keeps it', async () => {
    const doc = await create('invoices');
    const contacts = await api.get(`${ws.base}/contacts?limit=100`);
    const contact = contacts.body.data.find((c: { invoice_account_id: number }) => c.invoice_account_id === ws.purchaser);
    await api.patch(`${ws.base}/contacts/${contact.id}`, { invoice_account: { email: 'new@customer.example' } });
    const issued = await post(`invoices/${doc.id}/issue`);
    expect(issued.body.purchaser.email).toBe('new@customer.example');
    await api.patch(`${ws.base}/contacts/${contact.id}`, { invoice_account: { email: 'ap@customer.example' } });
    expect((await api.get(`${ws.base}/invoices/${doc.id}`)).body.purchaser.email).toBe('new@customer.example');
  });

  it('concurrent issues hand out every number exactly once (no gap, no duplicate)', async () => {
    const fresh = await docsWorkspace(system);
    // Eight racing issues: enough to interleave every step, few enough that the last one queued behind
    // the others stays well inside the gateway's 10 s deadline on a loaded 2-core CI machine.
    const drafts = [];
    for (let i = 0; i < 8; i++) drafts.push(await create('invoices', {}, fresh));
    const results = await Promise.all(drafts.map((d) => post(`invoices/${d.id}/issue`, undefined, fresh)));
    expect(results.map((r) => r.status)).toEqual(drafts.map(() => 200));
    const numbers = results.map((r) => Number(String(r.body.number).slice(4))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: drafts.length }, (_, i) => i + 1));
  });

  it('invoices and credit notes have separate sequences', async () => {
    const fresh = await docsWorkspace(system);
    await issuedInvoice({}, fresh);
    const note = await create('credit_notes', {}, fresh);
    expect((await post(`credit_notes/${note.id}/issue`, undefined, fresh)).body.number).toBe(`${year}000001`);
  });
});

describe('POST invoices/<id>/mark_paid', () => {
  it('exposed → paid with paid_on today; amount_due 0', async () => {
    const inv = await issuedInvoice();
    const res = await post(`invoices/${inv.id}/mark_paid`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'paid', paid_on: new Date().toISOString().slice(0, 10), amount_due: '0.00' });
  });

  it('keeps a paid_on set beforehand', async () => {
    const inv = await issuedInvoice({ paid_on: '2026-01-05' });
    expect((await post(`invoices/${inv.id}/mark_paid`)).body).toMatchObject({ status: 'paid', paid_on: '2026-01-05' });
  });

  it('on a paid invoice: 200 with the existing payload, paid_on unchanged', async () => {
    const inv = await issuedInvoice({ paid_on: '2026-02-01' });
    const first = await post(`invoices/${inv.id}/mark_paid`);
    const second = await post(`invoices/${inv.id}/mark_paid`);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
  });

  it('a draft → 422 invoice_not_issued (issue it first); another type → 404', async () => {
    const draft = await create('invoices');
    const res = await post(`invoices/${draft.id}/mark_paid`);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('invoice_not_issued');
    const proforma = await create('proformas');
    expect((await post(`invoices/${proforma.id}/mark_paid`)).status).toBe(404);
  });
});

describe('POST invoices/<id>/send', () => {
  it('an empty body sends to the purchaser e-mail and sets email_sent_at', async () => {
    const inv = await issuedInvoice();
    expect(inv.email_sent_at).toBeNull();
    const res = await post(`invoices/${inv.id}/send`);
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.email_sent_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(res.body.status).toBe('exposed');
  });

  it('takes to (string or list), cc, bcc, subject, message and locale', async () => {
    const inv = await issuedInvoice();
    const res = await post(`invoices/${inv.id}/send`, {
      to: ['a@example.com', 'b@example.com'],
      cc: 'c@example.com',
      bcc: [],
      subject: 'Your invoice',
      message: 'See attached.',
      locale: 'de',
    });
    expect(res.status).toBe(200);
  });

  it('422 when the purchaser has no e-mail and no to is given; fine with to', async () => {
    const inv = await issuedInvoice({ purchaser_id: ws.purchaserNoMail });
    const res = await post(`invoices/${inv.id}/send`, {});
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'missing_recipient', field: 'to' });
    expect((await api.get(`${ws.base}/invoices/${inv.id}`)).body.email_sent_at).toBeNull();
    expect((await post(`invoices/${inv.id}/send`, { to: 'x@example.com' })).status).toBe(200);
  });

  it('422 for a malformed address in to, cc or bcc', async () => {
    const inv = await issuedInvoice();
    for (const body of [{ to: 'not-an-address' }, { cc: ['ok@example.com', 'bad@'] }, { bcc: 'a b@example.com' }]) {
      const res = await post(`invoices/${inv.id}/send`, body);
      expect({ body, status: res.status, code: res.body.error.code }).toEqual({ body, status: 422, code: 'invalid_email' });
    }
    expect((await post(`invoices/${inv.id}/send`, { locale: 'xx' })).status).toBe(422);
    expect((await post(`invoices/${inv.id}/send`, { reply_to: 'a@example.com' })).body.error.code).toBe('unknown_field');
  });

  it('404 for another type', async () => {
    const note = await create('credit_notes');
    expect((await post(`invoices/${note.id}/send`)).status).toBe(404);
  });
});

describe('credit notes', () => {
  it('links to its source invoice (credit_note.invoice is derived) and copies its lines by default', async () => {
    const inv = await issuedInvoice({ line_items: [line('100', '21', '3')] });
    const res = await post('credit_notes', { invoice_id: inv.id });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: 'credit_note',
      status: 'draft',
      invoice_id: inv.id,
      invoice: { id: inv.id, number: inv.number },
      purchaser_id: inv.purchaser_id,
      total: '363.00',
      amount_due: '0.00',
    });
  });

  it('an issued credit note reduces the invoice amount_due', async () => {
    const inv = await issuedInvoice({ line_items: [line('100', '21', '3')] });
    const note = await post('credit_notes', { invoice_id: inv.id, line_items: [line('100', '21', '1')] });
    expect((await api.get(`${ws.base}/invoices/${inv.id}`)).body.amount_due).toBe('363.00');
    const issued = await post(`credit_notes/${note.body.id}/issue`);
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ status: 'exposed', number: expect.stringMatching(/^\d{10}$/) });
    expect((await api.get(`${ws.base}/invoices/${inv.id}`)).body).toMatchObject({ amount_due: '242.00', credited_amount: '121.00' });
  });

  it('cannot exceed what the invoice still owes: 422 credit_exceeds_amount_due', async () => {
    const inv = await issuedInvoice({ line_items: [line('100', '0', '1')] });
    const first = await post('credit_notes', { invoice_id: inv.id, line_items: [line('60', '0')] });
    const second = await post('credit_notes', { invoice_id: inv.id, line_items: [line('50', '0')] });
    expect((await post(`credit_notes/${first.body.id}/issue`)).status).toBe(200);
    const refused = await post(`credit_notes/${second.body.id}/issue`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('credit_exceeds_amount_due');
    expect((await api.get(`${ws.base}/credit_notes/${second.body.id}`)).body.status).toBe('draft');
    expect((await api.get(`${ws.base}/invoices/${inv.id}`)).body.amount_due).toBe('40.00');
  });

  it('concurrent credit notes never exceed the invoice', async () => {
    const inv = await issuedInvoice({ line_items: [line('100', '0', '1')] });
    const notes = [];
    for (let i = 0; i < 4; i++) notes.push((await post('credit_notes', { invoice_id: inv.id, line_items: [line('30', '0')] })).body);
    const results = await Promise.all(notes.map((n) => post(`credit_notes/${n.id}/issue`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect((await api.get(`${ws.base}/invoices/${inv.id}`)).body.amount_due).toBe('10.00');
  });

  it('lines are positive amounts; the invoice must be issued and in the same currency', async () => {
    const inv = await issuedInvoice();
    expect((await post('credit_notes', { invoice_id: inv.id, line_items: [line('-10')] })).status).toBe(422);
    const draft = await create('invoices');
    expect((await post('credit_notes', { invoice_id: draft.id })).body.error.code).toBe('invoice_not_issued');
    expect((await post('credit_notes', { invoice_id: inv.id, currency: 'EUR', exchange_rate: '25' })).body.error.code).toBe('currency_mismatch');
    const quote = await create('quotes');
    expect((await post('credit_notes', { invoice_id: quote.id })).body.error.code).toBe('invoice_not_found');
  });

  it('issue: draft → exposed; again → 422', async () => {
    const note = await create('credit_notes');
    expect((await post(`credit_notes/${note.id}/issue`)).body.status).toBe('exposed');
    expect((await post(`credit_notes/${note.id}/issue`)).status).toBe(422);
    expect((await post(`credit_notes/${note.id}/issue`)).body.error.code).toBe('not_draft');
  });

  it('an issued credit note applied to its invoice cannot be deleted (422); a draft or unlinked one can', async () => {
    const inv = await issuedInvoice();
    const applied = await post('credit_notes', { invoice_id: inv.id, line_items: [line('10')] });
    await post(`credit_notes/${applied.body.id}/issue`);
    const refused = await api.delete(`${ws.base}/credit_notes/${applied.body.id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('credit_note_applied');
    const draft = await post('credit_notes', { invoice_id: inv.id, line_items: [line('10')] });
    expect((await api.delete(`${ws.base}/credit_notes/${draft.body.id}`)).status).toBe(204);
    const unlinked = await create('credit_notes');
    await post(`credit_notes/${unlinked.id}/issue`);
    expect((await api.delete(`${ws.base}/credit_notes/${unlinked.id}`)).status).toBe(204);
  });
});

describe('POST proformas/<id>/convert_to_invoice', () => {
  it('201 with the final, issued invoice; the proforma lists it and is converted', async () => {
    const proforma = await create('proformas', { line_items: [line('500', '21', '2')], note: 'Advance' });
    expect(proforma.number).toMatch(/^\d{10}$/);
    const res = await post(`proformas/${proforma.id}/convert_to_invoice`);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: 'invoice',
      status: 'exposed',
      number: expect.stringMatching(/^\d{10}$/),
      proforma_id: proforma.id,
      purchaser_id: proforma.purchaser_id,
      total: '1210.00',
      note: 'Advance',
    });
    const after = await api.get(`${ws.base}/proformas/${proforma.id}`);
    expect(after.body).toMatchObject({ status: 'converted', invoices: [{ id: res.body.id, number: res.body.number, type: 'invoice' }] });
  });

  it('converts once: again → 422 proforma_already_converted; the invoice is independent afterwards', async () => {
    const proforma = await create('proformas');
    const invoice = (await post(`proformas/${proforma.id}/convert_to_invoice`)).body;
    const again = await post(`proformas/${proforma.id}/convert_to_invoice`);
    expect(again.status).toBe(422);
    expect(again.body.error.code).toBe('proforma_already_converted');
    expect((await api.patch(`${ws.base}/proformas/${proforma.id}`, { line_items: [line('1')] })).body.error.code).toBe('document_locked');
    expect((await post(`invoices/${invoice.id}/mark_paid`)).body.status).toBe('paid');
    expect((await api.get(`${ws.base}/proformas/${proforma.id}`)).body.status).toBe('converted');
  });

  it('a proforma with invoices cannot be deleted (422); once they are gone it can', async () => {
    const proforma = await create('proformas');
    const invoice = (await post(`proformas/${proforma.id}/convert_to_invoice`)).body;
    const refused = await api.delete(`${ws.base}/proformas/${proforma.id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('proforma_has_invoices');
    expect((await api.delete(`${ws.base}/invoices/${invoice.id}`)).status).toBe(204);
    expect((await api.get(`${ws.base}/proformas/${proforma.id}`)).body.invoices).toEqual([]);
    expect((await api.delete(`${ws.base}/proformas/${proforma.id}`)).status).toBe(204);
  });

  it('422 for a proforma without lines; 404 for another type', async () => {
    const empty = await create('proformas', { line_items: [] });
    expect((await post(`proformas/${empty.id}/convert_to_invoice`)).body.error.code).toBe('no_line_items');
    const inv = await create('invoices');
    expect((await post(`proformas/${inv.id}/convert_to_invoice`)).status).toBe(404);
  });

  it('concurrent conversions create one invoice', async () => {
    const proforma = await create('proformas');
    const results = await Promise.all([1, 2, 3].map(() => post(`proformas/${proforma.id}/convert_to_invoice`)));
    const created = results.filter((r) => r.status === 201);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect((await api.get(`${ws.base}/proformas/${proforma.id}`)).body.invoices).toHaveLength(1);
  });
});

describe('quotes', () => {
  it('POST quotes/<id>/accept: open → accepted with accepted_at; again → 200 unchanged', async () => {
    const quote = await create('quotes');
    expect(quote).toMatchObject({ status: 'open', accepted_at: null, amount_due: '0.00', documents: [] });
    const accepted = await post(`quotes/${quote.id}/accept`);
    expect(accepted.status).toBe(200);
    expect(accepted.body.status).toBe('accepted');
    expect(Date.parse(accepted.body.accepted_at)).toBeGreaterThan(0);
    const again = await post(`quotes/${quote.id}/accept`);
    expect(again.status).toBe(200);
    expect(again.body.accepted_at).toBe(accepted.body.accepted_at);
    expect((await api.patch(`${ws.base}/quotes/${quote.id}`, { line_items: [line('1')] })).body.error.code).toBe('document_locked');
  });

  it('converts an accepted quote to a draft invoice and a proforma, listed in its documents', async () => {
    const quote = await create('quotes', { line_items: [line('80', '12', '5')] });
    expect((await post(`quotes/${quote.id}/convert_to_invoice`)).body.error.code).toBe('quote_not_accepted');
    await post(`quotes/${quote.id}/accept`);
    const proforma = await post(`quotes/${quote.id}/convert_to_proforma`);
    expect(proforma.status).toBe(201);
    expect(proforma.body).toMatchObject({ type: 'proforma', status: 'open', quote_id: quote.id, total: '448.00' });
    const invoice = await post(`quotes/${quote.id}/convert_to_invoice`);
    expect(invoice.status).toBe(201);
    expect(invoice.body).toMatchObject({ type: 'invoice', status: 'draft', number: null, quote_id: quote.id, total: '448.00' });
    const after = await api.get(`${ws.base}/quotes/${quote.id}`);
    expect(after.body.documents.map((d: { id: number; type: string }) => [d.id, d.type])).toEqual([
      [invoice.body.id, 'invoice'],
      [proforma.body.id, 'proforma'],
    ]);
    // The chain goes on: the proforma's final invoice also derives from the quote.
    const final = await post(`proformas/${proforma.body.id}/convert_to_invoice`);
    expect(final.body.quote_id).toBe(quote.id);
  });

  it('404 for another type', async () => {
    const proforma = await create('proformas');
    expect((await post(`quotes/${proforma.id}/accept`)).status).toBe(404);
  });
});

describe('Idempotency-Key on document POSTs', () => {
  it('a retried create or action replays the first answer instead of acting twice', async () => {
    const key = `doc-${Date.now()}-${Math.random()}`;
    const body = { purchaser_id: ws.purchaser, line_items: [line()] };
    const first = await api.post(`${ws.base}/invoices`, body, { headers: { 'idempotency-key': key } });
    const again = await api.post(`${ws.base}/invoices`, body, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const issueKey = `${key}-issue`;
    const issued = await api.post(`${ws.base}/invoices/${first.body.id}/issue`, undefined, { headers: { 'idempotency-key': issueKey } });
    const replayed = await api.post(`${ws.base}/invoices/${first.body.id}/issue`, undefined, { headers: { 'idempotency-key': issueKey } });
    expect(issued.status).toBe(200);
    expect(replayed.status).toBe(200);
    expect(replayed.body.number).toBe(issued.body.number);
  });
});
