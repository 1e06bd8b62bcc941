// Scopes across resources (docs/decisions.md, "Scopes"): an operation that copies data from a record
// of another resource needs read on that resource; a conversion that creates a document of another
// type needs write on that type. 403 insufficient_scope names the scope; nothing is written.
import { Api } from '../support/api';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { tokenFor } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let ws: DocsWorkspace;
let api: Api;
let invoiceId: number;
let bankAccountId: number;

beforeAll(async () => {
  system = await startSystem();
  ws = await docsWorkspace(system);
  api = ws.api;
  await system.cli('plan', 'set', '--workspace', String(ws.id), '--cap', 'bank_accounts=10');
  bankAccountId = (await api.post(`${ws.base}/bank_accounts`, { name: 'Main', iban: 'DE89370400440532013000' })).body.id;
  const draft = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line('1000')] });
  invoiceId = (await api.post(`${ws.base}/invoices/${draft.body.id}/issue`)).body.id;
});
afterAll(() => system?.stop());

const token = (scopes: string) => tokenFor(system, 'pat', ws.ownerEmail, scopes);
const count = async (segment: string) => (await api.get(`${ws.base}/${segment}?limit=100`)).body.data.length;

async function expectRefused(res: { status: number; body: { error: { code: string; required_scope: string } } }, scope: string) {
  expect([res.status, res.body.error.code, res.body.error.required_scope]).toEqual([403, 'insufficient_scope', scope]);
}

describe('POST /credit_notes from an invoice needs read:invoices', () => {
  it('write:credit_notes alone cannot copy an invoice\'s lines and buyer', async () => {
    const before = await count('credit_notes');
    const res = await api.post(`${ws.base}/credit_notes`, { invoice_id: invoiceId }, { token: await token('write:credit_notes') });
    await expectRefused(res, 'read:invoices');
    expect(await count('credit_notes')).toBe(before);
  });

  it('PATCH of a credit note pointing it at an invoice needs read:invoices too', async () => {
    const note = await api.post(`${ws.base}/credit_notes`, { purchaser_id: ws.purchaser, line_items: [line()] });
    const res = await api.patch(`${ws.base}/credit_notes/${note.body.id}`, { invoice_id: invoiceId }, { token: await token('write:credit_notes,read:contacts') });
    await expectRefused(res, 'read:invoices');
    expect((await api.get(`${ws.base}/credit_notes/${note.body.id}`)).body.invoice_id).toBeNull();
  });

  it('with read:invoices it succeeds', async () => {
    const res = await api.post(`${ws.base}/credit_notes`, { invoice_id: invoiceId }, { token: await token('write:credit_notes,read:invoices') });
    expect(res.status).toBe(201);
    expect(res.body.invoice_id).toBe(invoiceId);
  });
});

describe('documents copying a purchaser or a bank account need read:contacts / read:bank_accounts', () => {
  it.each(['invoices', 'credit_notes', 'proformas', 'quotes'])('POST %s', async (segment) => {
    const before = await count(segment);
    const noContacts = await api.post(`${ws.base}/${segment}`, { purchaser_id: ws.purchaser }, { token: await token(`write:${segment},read:bank_accounts`) });
    await expectRefused(noContacts, 'read:contacts');
    const noBank = await api.post(
      `${ws.base}/${segment}`,
      { purchaser_id: ws.purchaser, bank_account_id: bankAccountId },
      { token: await token(`write:${segment},read:contacts`) },
    );
    await expectRefused(noBank, 'read:bank_accounts');
    expect(await count(segment)).toBe(before);
    const allowed = await api.post(
      `${ws.base}/${segment}`,
      { purchaser_id: ws.purchaser, bank_account_id: bankAccountId },
      { token: await token(`write:${segment},read:contacts,read:bank_accounts`) },
    );
    expect(allowed.status).toBe(201);
  });

  it('PATCH naming purchaser_id or bank_account_id needs the same; other fields and null do not', async () => {
    const draft = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, bank_account_id: bankAccountId });
    const writer = await token('write:invoices');
    await expectRefused(await api.patch(`${ws.base}/invoices/${draft.body.id}`, { purchaser_id: ws.purchaserNoMail }, { token: writer }), 'read:contacts');
    await expectRefused(await api.patch(`${ws.base}/invoices/${draft.body.id}`, { bank_account_id: bankAccountId }, { token: writer }), 'read:bank_accounts');
    expect((await api.get(`${ws.base}/invoices/${draft.body.id}`)).body.updated_at).toBe(draft.body.updated_at);
    expect((await api.patch(`${ws.base}/invoices/${draft.body.id}`, { note: 'fine', bank_account_id: null }, { token: writer })).status).toBe(200);
  });
});

describe('conversions that create another type need write on that type', () => {
  it('POST proformas/<id>/convert_to_invoice needs write:invoices besides manage:proformas', async () => {
    const proforma = await api.post(`${ws.base}/proformas`, { purchaser_id: ws.purchaser, line_items: [line()] });
    const before = await count('invoices');
    const res = await api.post(`${ws.base}/proformas/${proforma.body.id}/convert_to_invoice`, undefined, { token: await token('manage:proformas') });
    await expectRefused(res, 'write:invoices');
    expect(await count('invoices')).toBe(before);
    const ok = await api.post(`${ws.base}/proformas/${proforma.body.id}/convert_to_invoice`, undefined, { token: await token('manage:proformas,write:invoices') });
    expect(ok.status).toBe(201);
  });

  it.each([
    ['convert_to_invoice', 'write:invoices'],
    ['convert_to_proforma', 'write:proformas'],
  ])('POST quotes/<id>/%s needs %s besides manage:quotes', async (action, scope) => {
    const quote = await api.post(`${ws.base}/quotes`, { purchaser_id: ws.purchaser, line_items: [line()] });
    await api.post(`${ws.base}/quotes/${quote.body.id}/accept`);
    await expectRefused(await api.post(`${ws.base}/quotes/${quote.body.id}/${action}`, undefined, { token: await token('manage:quotes') }), scope);
    expect((await api.get(`${ws.base}/quotes/${quote.body.id}`)).body.documents).toEqual([]);
    const ok = await api.post(`${ws.base}/quotes/${quote.body.id}/${action}`, undefined, { token: await token(`manage:quotes,${scope}`) });
    expect(ok.status).toBe(201);
  });
});
