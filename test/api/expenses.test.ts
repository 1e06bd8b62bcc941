// Spec §2 Expense, §4 Expenses (list, create, read, update, soft delete), §5 scopes, and the pagination
// rules for expenses. Upload, the file download and retry_extraction are tested with the job machinery.
import { Api, eventually, onEveryGateway } from '../support/api';
import { setDocumentSettings } from '../support/documents';
import { createWorkspace, tokenFor, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let api: Api;
let ws: Workspace;
let base: string;

beforeAll(async () => {
  system = await startSystem();
  ws = await createWorkspace(system);
  api = new Api(system.baseUrl, ws.pat);
  base = `/api/v1/accounts/${ws.id}/expenses`;
});
afterAll(() => system?.stop());

/** A fresh workspace, for tests that need to know every expense in it. */
async function freshWorkspace(): Promise<{ api: Api; base: string; ws: Workspace }> {
  const w = await createWorkspace(system, 'Fresh s.r.o.');
  return { api: new Api(system.baseUrl, w.pat), base: `/api/v1/accounts/${w.id}/expenses`, ws: w };
}

const contact = async (name: string) => (await api.post(`/api/v1/accounts/${ws.id}/contacts`, { invoice_account: { name } })).body;

describe('POST /accounts/<account_id>/expenses', () => {
  it('creates an expense with items and exact totals (VAT rounded once per rate)', async () => {
    const supplier = await contact('Papiernictvo s.r.o.');
    const res = await api.post(base, {
      expense: {
        supplier_id: supplier.id,
        document_number: 'FV-2024-001',
        issue_date: '2024-03-01',
        currency: 'eur',
        note: 'Office paper',
        expense_items_attributes: [
          { name: 'Paper', quantity: '3', unit_price: '0.335', vat_rate: '20' },
          { name: 'Pens', quantity: 1, unit_price: 0.1, vat_rate: '20' },
          { name: 'Book', unit_price: '10', vat_rate: '10' },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      supplier_id: supplier.id,
      document_number: 'FV-2024-001',
      issue_date: '2024-03-01',
      currency: 'EUR',
      extraction_status: 'manual',
      job_id: null,
      file: null,
      deleted: null,
      // 3 × 0.335 = 1.005 → 1.01; + 0.10 = 1.11 at 20 % → VAT 0.222 → 0.22; 10.00 at 10 % → 1.00
      subtotal: '11.11',
      vat_total: '1.22',
      total: '12.33',
      vat_breakdown: [
        { rate: '20', base: '1.11', vat: '0.22' },
        { rate: '10', base: '10.00', vat: '1.00' },
      ],
    });
    expect(res.body.line_items.map((i: { total: string }) => i.total)).toEqual(['1.01', '0.10', '10.00']);
  });
});

describe('POST /accounts/<account_id>/expenses: the workspace currency', () => {
  it('the spec’s minimal body with items and no currency is priced in the workspace currency, as documents are', async () => {
    const w = await createWorkspace(system, 'Koruna s.r.o.');
    await setDocumentSettings(system, w.id, { currency: 'CZK' });
    const res = await new Api(system.baseUrl, w.pat).post(`/api/v1/accounts/${w.id}/expenses`, { expense: { expense_items_attributes: [{ name: 'Paper', unit_price: '10', vat_rate: '21' }] } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ currency: 'CZK', total: '12.10' });
  });
});

describe('POST /accounts/<account_id>/expenses: supplier', () => {
  it('with supplier_id: links a contact of the workspace', async () => {
    const supplier = await contact('Linked Supplier a.s.');
    const res = await api.post(base, { expense: { supplier_id: supplier.id } });
    expect(res.status).toBe(201);
    expect(res.body.supplier_id).toBe(supplier.id);
  });

  it('inline address, unit and invoice_account create a contact and its legal entity', async () => {
    const res = await api.post(base, {
      expense: { document_number: 'R-1' },
      unit: { name: 'Our stationer' },
      invoice_account: { name: 'Papier Bratislava s.r.o.', vat_id: 'SK2020317068' },
      address: { street: 'Hlavná 1', municipality: 'Bratislava', postal_code: '81101', country_alpha2: 'SK' },
    });
    expect(res.status).toBe(201);
    const created = await api.get(`/api/v1/accounts/${ws.id}/contacts/${res.body.supplier_id}`);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      name: 'Our stationer',
      invoice_account: { name: 'Papier Bratislava s.r.o.', vat_id: 'SK2020317068', address: { street: 'Hlavná 1', municipality: 'Bratislava', country_alpha2: 'sk' } },
    });
  });

  it('422 invalid_supplier for a contact of another workspace, a deleted contact and an unknown id; nothing written', async () => {
    const other = await createWorkspace(system, 'Other s.r.o.');
    const theirs = await api.post(`/api/v1/accounts/${other.id}/contacts`, { invoice_account: { name: 'Theirs' } }, { token: other.pat });
    const gone = await contact('Gone s.r.o.');
    await api.delete(`/api/v1/accounts/${ws.id}/contacts/${gone.id}`);
    const fresh = await freshWorkspace();
    for (const id of [theirs.body.id, gone.id, 987654321]) {
      const res = await api.post(base, { expense: { supplier_id: id, note: 'nothing written' } });
      expect([id, res.status, res.body.error?.code, res.body.error?.field]).toEqual([id, 422, 'invalid_supplier', 'expense.supplier_id']);
      expect((await fresh.api.post(fresh.base, { expense: { supplier_id: id } })).status).toBe(422);
    }
    expect((await fresh.api.get(fresh.base)).body.data).toEqual([]);
  });

  it('422 ambiguous_supplier for supplier_id and an inline supplier at once; no contact is created', async () => {
    const supplier = await contact('Either s.r.o.');
    const fresh = await freshWorkspace();
    const mine = (await fresh.api.post(`/api/v1/accounts/${fresh.ws.id}/contacts`, { invoice_account: { name: 'Mine' } })).body;
    const res = await fresh.api.post(fresh.base, { expense: { supplier_id: mine.id }, invoice_account: { name: 'Or s.r.o.' } });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'ambiguous_supplier', field: 'expense.supplier_id' });
    expect((await fresh.api.get(`/api/v1/accounts/${fresh.ws.id}/contacts`)).body.data.map((c: { id: number }) => c.id)).toEqual([mine.id]);
    expect(supplier.id).not.toBe(mine.id);
  });

  it('an inline supplier the contacts service refuses is its 422 (invalid VAT id), and no expense is written', async () => {
    const fresh = await freshWorkspace();
    const res = await fresh.api.post(fresh.base, { expense: { note: 'x' }, invoice_account: { name: 'Bad VAT', vat_id: 'CZ25596642' } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('invalid_vat_id');
    expect((await fresh.api.get(fresh.base)).body.data).toEqual([]);
  });
});

describe('POST /accounts/<account_id>/expenses: files are not accepted on the JSON endpoint', () => {
  it.each([
    [{ file: 'JVBERi0xLjQK' }, 'file'],
    [{ attachment: { filename: 'a.pdf' } }, 'attachment'],
    [{ expense: { file: 'JVBERi0xLjQK' } }, 'expense.file'],
    [{ expense: { attachment: null } }, 'expense.attachment'],
  ])('%j → 422 file_not_accepted on %s', async (body, field) => {
    const res = await api.post(base, body);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'file_not_accepted', field });
  });

  it('a multipart body (a file upload sent here) → 422 file_not_accepted, also on PATCH; nothing written', async () => {
    const fresh = await freshWorkspace();
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('%PDF-1.4\n')], { type: 'application/pdf' }), 'receipt.pdf');
    const res = await fresh.api.request('POST', fresh.base, { rawBody: form });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('file_not_accepted');
    expect((await fresh.api.get(fresh.base)).body.data).toEqual([]);
    const created = await fresh.api.post(fresh.base, { expense: { note: 'n' } });
    const patch = new FormData();
    patch.append('file', new Blob([Buffer.from('GIF89a')], { type: 'image/gif' }), 'r.gif');
    const patched = await fresh.api.request('PATCH', `${fresh.base}/${created.body.id}`, { rawBody: patch });
    expect(patched.status).toBe(422);
    expect(patched.body.error.code).toBe('file_not_accepted');
  });

  it('other non-JSON bodies stay 415', async () => {
    const res = await api.request('POST', base, { rawBody: 'note=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
  });
});

describe('POST /accounts/<account_id>/expenses: body validation', () => {
  it.each([
    [{ expense: { extraction_status: 'completed' } }, 'unknown_field', 'expense.extraction_status'],
    [{ expense: { total: '10.00' } }, 'unknown_field', 'expense.total'],
    [{ expense: { job_id: 'x' } }, 'unknown_field', 'expense.job_id'],
    [{ note: 'top-level' }, 'unknown_field', 'note'],
    [{ expense: { issue_date: '2024-02-30' } }, 'invalid_value', 'expense.issue_date'],
    [{ expense: { due_date: '1800-01-01' } }, 'invalid_date', 'expense.due_date'],
    [{ expense: { currency: 'XYZ' } }, 'invalid_currency', 'expense.currency'],
    [{ expense: { currency: null, expense_items_attributes: [{ name: 'x', unit_price: '1' }] } }, 'missing_field', 'expense.currency'],
    [{ expense: { currency: 'EUR', expense_items_attributes: [{ name: 'x', unit_price: '1e5' }] } }, 'invalid_decimal', 'expense.expense_items_attributes[0].unit_price'],
    [{ expense: { currency: 'EUR', expense_items_attributes: [{ name: 'x' }] } }, 'missing_field', 'expense.expense_items_attributes[0].unit_price'],
    [{ expense: { currency: 'EUR', expense_items_attributes: [{ id: 1, name: 'x' }] } }, 'unknown_expense_item', 'expense.expense_items_attributes[0].id'],
    [{ expense: { supplier_id: 9007199254740992 } }, 'invalid_value', 'expense.supplier_id'],
    [{ expense: { currency: 'EUR', expense_items_attributes: [{ id: 1e20, quantity: '1' }] } }, 'invalid_value', 'expense.expense_items_attributes.0.id'],
    [{ expense: { currency: 'EUR', expense_items_attributes: [{ name: 'x', unit_price: '1', extra: true }] } }, 'unknown_field', 'expense.expense_items_attributes.0.extra'],
  ])('%j → 422 %s on %s', async (body, code, field) => {
    const res = await api.post(base, body);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code, field });
  });

  it('an empty body creates an empty manual expense', async () => {
    const res = await api.post(base, {});
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ extraction_status: 'manual', supplier_id: null, line_items: [], total: null, issue_date: null });
  });
});

describe('POST /accounts/<account_id>/expenses: Idempotency-Key', () => {
  it('a retry replays the first expense; with an inline supplier one contact is created', async () => {
    const fresh = await freshWorkspace();
    const body = { expense: { note: 'keyed' }, invoice_account: { name: 'Keyed Supplier s.r.o.' } };
    const headers = { 'idempotency-key': `exp-${Date.now()}` };
    const first = await fresh.api.post(fresh.base, body, { headers });
    const retry = await fresh.api.post(fresh.base, body, { headers });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await fresh.api.get(fresh.base)).body.data).toHaveLength(1);
    expect((await fresh.api.get(`/api/v1/accounts/${fresh.ws.id}/contacts`)).body.data).toHaveLength(1);
    const conflict = await fresh.api.post(fresh.base, { expense: { note: 'other' } }, { headers });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('idempotency_key_conflict');
  });
});

describe('GET /accounts/<account_id>/expenses/<id>', () => {
  it('reads an expense with every field of the response', async () => {
    const created = await api.post(base, { expense: { note: 'read me', due_date: '2024-04-01', variable_symbol: '123456' } });
    const res = await api.get(`${base}/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
    expect(Object.keys(res.body).sort()).toEqual(
      ['bic', 'confidence', 'created_at', 'currency', 'deleted', 'document_number', 'due_date', 'extraction_failure', 'extraction_status', 'file', 'iban', 'id', 'issue_date', 'job_id', 'line_items', 'note', 'rejected_job_id', 'subtotal', 'supplier', 'supplier_id', 'total', 'updated_at', 'variable_symbol', 'vat_breakdown', 'vat_total'].sort(),
    );
  });

  it('404 for an unknown id, an id of another workspace, the sandbox of this one, and ids that are not ids', async () => {
    const created = await api.post(base, {});
    const other = await createWorkspace(system, 'Elsewhere s.r.o.');
    expect((await api.get(`/api/v1/accounts/${other.id}/expenses/${created.body.id}`, { token: other.pat })).status).toBe(404);
    const sandbox = await tokenFor(system, 'test', ws.id, 'read:expenses');
    expect((await api.get(`${base}/${created.body.id}`, { token: sandbox })).status).toBe(404);
    for (const id of ['987654321', '9007199254740992', '99999999999999999999', '0', '-1', 'abc', '1.5']) {
      const res = await api.get(`${base}/${id}`);
      expect([id, res.status, res.body.error?.code]).toEqual([id, 404, 'resource_not_found']);
    }
  });
});

describe('PATCH /accounts/<account_id>/expenses/<id>', () => {
  it('changes only the fields given; null clears an optional field', async () => {
    const created = await api.post(base, { expense: { note: 'keep', document_number: 'D-1', issue_date: '2024-01-15' } });
    const res = await api.patch(`${base}/${created.body.id}`, { expense: { document_number: null, due_date: '2024-02-15' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ note: 'keep', document_number: null, issue_date: '2024-01-15', due_date: '2024-02-15' });
    expect(res.body.updated_at >= created.body.updated_at).toBe(true);
  });

  it('expense_items_attributes: adds, updates by id and removes with _destroy; totals follow', async () => {
    const created = await api.post(base, {
      expense: { currency: 'CZK', expense_items_attributes: [{ name: 'A', quantity: '2', unit_price: '100', vat_rate: '21' }, { name: 'B', unit_price: '50', vat_rate: '12' }] },
    });
    const [a, b] = created.body.line_items;
    expect(created.body.total).toBe('298.00'); // 200 + 42 + 50 + 6
    const res = await api.patch(`${base}/${created.body.id}`, {
      expense: { expense_items_attributes: [{ id: a.id, quantity: '1' }, { id: b.id, _destroy: true }, { name: 'C', unit_price: '10.10' }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.line_items.map((i: { name: string; total: string }) => [i.name, i.total])).toEqual([['A', '100.00'], ['C', '10.10']]);
    expect(res.body).toMatchObject({ subtotal: '110.10', vat_total: '21.00', total: '131.10' });
    const unknown = await api.patch(`${base}/${created.body.id}`, { expense: { expense_items_attributes: [{ id: b.id, quantity: '3' }] } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.code).toBe('unknown_expense_item');
    expect((await api.get(`${base}/${created.body.id}`)).body.total).toBe('131.10');
  });

  it('inline supplier objects update the linked contact', async () => {
    const created = await api.post(base, { invoice_account: { name: 'Before s.r.o.' } });
    const res = await api.patch(`${base}/${created.body.id}`, { unit: { name: 'After label' }, address: { municipality: 'Brno', country_alpha2: 'cz' } });
    expect(res.status).toBe(200);
    expect(res.body.supplier_id).toBe(created.body.supplier_id);
    const linked = await api.get(`/api/v1/accounts/${ws.id}/contacts/${created.body.supplier_id}`);
    expect(linked.body).toMatchObject({ name: 'After label', invoice_account: { name: 'Before s.r.o.', address: { municipality: 'Brno', country_alpha2: 'cz' } } });
  });

  it('supplier_id re-links or (null) unlinks; a search by the new supplier finds it', async () => {
    const created = await api.post(base, { invoice_account: { name: 'Old Supplier' } });
    const next = await contact('Quetzal Trading s.r.o.');
    const relinked = await api.patch(`${base}/${created.body.id}`, { expense: { supplier_id: next.id } });
    expect(relinked.body.supplier_id).toBe(next.id);
    const found = await api.get(`${base}?search=${encodeURIComponent('quetzal')}`);
    expect(found.body.data.map((e: { id: number }) => e.id)).toContain(created.body.id);
    const unlinked = await api.patch(`${base}/${created.body.id}`, { expense: { supplier_id: null } });
    expect(unlinked.body.supplier_id).toBeNull();
    expect((await api.get(`${base}?search=quetzal`)).body.data.map((e: { id: number }) => e.id)).not.toContain(created.body.id);
  });

  it('an empty PATCH answers the expense unchanged (no updated_at bump)', async () => {
    const created = await api.post(base, { expense: { note: 'same' } });
    const res = await api.patch(`${base}/${created.body.id}`, {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created.body);
  });

  it('404 for a deleted or unknown expense', async () => {
    const created = await api.post(base, {});
    await api.delete(`${base}/${created.body.id}`);
    expect((await api.patch(`${base}/${created.body.id}`, { expense: { note: 'x' } })).status).toBe(404);
    expect((await api.patch(`${base}/${created.body.id}`, {})).status).toBe(404);
    expect((await api.patch(`${base}/987654321`, { expense: { note: 'x' } })).status).toBe(404);
  });
});

describe('DELETE /accounts/<account_id>/expenses/<id>', () => {
  it('soft-deletes: 204, then 404 on read, absent from lists, a second DELETE is 404', async () => {
    const fresh = await freshWorkspace();
    const kept = await fresh.api.post(fresh.base, { expense: { note: 'kept' } });
    const gone = await fresh.api.post(fresh.base, { expense: { note: 'gone' } });
    const res = await fresh.api.delete(`${fresh.base}/${gone.body.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await fresh.api.get(`${fresh.base}/${gone.body.id}`)).status).toBe(404);
    expect((await fresh.api.get(fresh.base)).body.data.map((e: { id: number }) => e.id)).toEqual([kept.body.id]);
    expect((await fresh.api.get(`${fresh.base}?search=gone`)).body.data).toEqual([]);
    expect((await fresh.api.delete(`${fresh.base}/${gone.body.id}`)).status).toBe(404);
  });
});

describe('GET /accounts/<account_id>/expenses: order and keyset pagination', () => {
  it('issue_date descending, undated first, ties by id descending', async () => {
    const fresh = await freshWorkspace();
    const made: Array<{ id: number; issue_date: string | null }> = [];
    for (const issue_date of ['2024-01-01', null, '2024-06-01', '2024-01-01', null, '2023-12-31', '2024-01-01']) {
      made.push((await fresh.api.post(fresh.base, { expense: { issue_date } })).body);
    }
    const res = await fresh.api.get(fresh.base);
    const expected = [...made].sort((a, b) => {
      const ka = a.issue_date ?? '9999';
      const kb = b.issue_date ?? '9999';
      return ka === kb ? b.id - a.id : ka < kb ? 1 : -1;
    });
    expect(res.body.data.map((e: { id: number }) => e.id)).toEqual(expected.map((e) => e.id));
    expect(res.body.data.map((e: { issue_date: string | null }) => e.issue_date)).toEqual([null, null, '2024-06-01', '2024-01-01', '2024-01-01', '2024-01-01', '2023-12-31']);
  });

  it('pages neither skip nor repeat a row while expenses are inserted between page fetches', async () => {
    const fresh = await freshWorkspace();
    const original: number[] = [];
    for (const issue_date of ['2024-03-01', '2024-02-01', null, '2024-02-01', '2024-01-01', '2024-02-01', '2023-05-05', null]) {
      original.push((await fresh.api.post(fresh.base, { expense: { issue_date } })).body.id);
    }
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: { body: { data: Array<{ id: number }>; next_cursor: string | null; has_more: boolean } } = await fresh.api.get(
        `${fresh.base}?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      seen.push(...res.body.data.map((e) => e.id));
      cursor = res.body.next_cursor;
      expect(res.body.has_more).toBe(cursor !== null);
      // Inserted after this page: before the cursor (undated, newer, a tie with a higher id) and after it (older).
      for (const issue_date of [null, '2031-01-01', '2024-02-01', '2020-01-01']) await fresh.api.post(fresh.base, { expense: { issue_date } });
      pages++;
    } while (cursor && pages < 20);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of original) expect(seen).toContain(id);
  });

  it('live and sandbox (test-token) expenses are separate lists', async () => {
    const fresh = await freshWorkspace();
    const live = await fresh.api.post(fresh.base, { expense: { note: 'live' } });
    const sandbox = await tokenFor(system, 'test', fresh.ws.id, 'write:expenses');
    const inSandbox = await fresh.api.post(fresh.base, { expense: { note: 'sandbox' } }, { token: sandbox });
    expect(inSandbox.status).toBe(201);
    expect((await fresh.api.get(fresh.base)).body.data.map((e: { id: number }) => e.id)).toEqual([live.body.id]);
    expect((await fresh.api.get(fresh.base, { token: sandbox })).body.data.map((e: { id: number }) => e.id)).toEqual([inSandbox.body.id]);
    expect((await fresh.api.patch(`${fresh.base}/${live.body.id}`, { expense: { note: 'x' } }, { token: sandbox })).status).toBe(404);
  });

  it('limit: default 25, at most 100; other values 422 invalid_limit', async () => {
    for (const limit of ['0', '101', '-1', 'abc', '1.5']) {
      const res = await api.get(`${base}?limit=${limit}`);
      expect([limit, res.status, res.body.error?.code]).toEqual([limit, 422, 'invalid_limit']);
    }
    expect((await api.get(`${base}?limit=100`)).status).toBe(200);
  });

  it('a forged cursor, or a cursor used with other filters, is 422 invalid_cursor', async () => {
    const fresh = await freshWorkspace();
    for (let i = 0; i < 3; i++) await fresh.api.post(fresh.base, { expense: { note: `acme ${i}` } });
    const page = await fresh.api.get(`${fresh.base}?limit=1&search=acme`);
    const cursor = encodeURIComponent(page.body.next_cursor);
    expect((await fresh.api.get(`${fresh.base}?limit=1&search=acme&cursor=${cursor}`)).status).toBe(200);
    // The same search spelled differently is the same filter.
    expect((await fresh.api.get(`${fresh.base}?limit=1&search=%20ACME%20&cursor=${cursor}`)).status).toBe(200);
    for (const query of [`search=other&cursor=${cursor}`, `cursor=${cursor}`, `search=acme&extraction_status=manual&cursor=${cursor}`, 'cursor=not-a-cursor', `cursor=${'A'.repeat(3000)}`]) {
      const res = await fresh.api.get(`${fresh.base}?${query}`);
      expect([query.slice(0, 40), res.status, res.body.error?.code]).toEqual([query.slice(0, 40), 422, 'invalid_cursor']);
    }
  });
});

describe('GET /accounts/<account_id>/expenses?search=', () => {
  let fresh: { api: Api; base: string; ws: Workspace };
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    fresh = await freshWorkspace();
    const supplier = (await fresh.api.post(`/api/v1/accounts/${fresh.ws.id}/contacts`, { invoice_account: { name: 'Železiarstvo  Horváth s.r.o.' } })).body;
    ids.number = (await fresh.api.post(fresh.base, { expense: { document_number: 'FV-2024/0042', issue_date: '2024-01-01' } })).body.id;
    ids.supplier = (await fresh.api.post(fresh.base, { expense: { supplier_id: supplier.id, issue_date: '2024-01-02' } })).body.id;
    ids.note = (await fresh.api.post(fresh.base, { expense: { note: 'Toner for the\nCANON   printer', issue_date: '2024-01-03' } })).body.id;
    ids.symbol = (await fresh.api.post(fresh.base, { expense: { variable_symbol: '77001234', issue_date: '2024-01-04' } })).body.id;
    ids.none = (await fresh.api.post(fresh.base, { expense: { note: 'nothing to see', issue_date: '2024-01-05' } })).body.id;
  });
  const find = async (q: string) => (await fresh.api.get(`${fresh.base}?search=${encodeURIComponent(q)}`)).body.data.map((e: { id: number }) => e.id);

  it('matches receipt identifiers, supplier name and note, case-insensitively, ignoring diacritics', async () => {
    expect(await find('fv-2024/0042')).toEqual([ids.number]);
    expect(await find('0042')).toEqual([ids.number]);
    expect(await find('ZELEZIARSTVO')).toEqual([ids.supplier]);
    expect(await find('horváth')).toEqual([ids.supplier]);
    expect(await find('canon printer')).toEqual([ids.note]);
    expect(await find('7700')).toEqual([ids.symbol]);
  });

  it('trims and folds whitespace in the query and the fields', async () => {
    expect(await find('   železiarstvo   horvath  ')).toEqual([ids.supplier]);
    expect(await find('the canon')).toEqual([ids.note]);
    expect(await find('   ')).toHaveLength(5);
  });

  it('never matches across two fields, and literal characters are literal', async () => {
    expect(await find('0042 toner')).toEqual([]);
    expect(await find('%')).toEqual([]);
    expect(await find('.*')).toEqual([]);
  });

  it('combines with pagination in issue_date order', async () => {
    const first = await fresh.api.get(`${fresh.base}?search=${encodeURIComponent('o')}&limit=2`);
    expect(first.body.has_more).toBe(true);
    const second = await fresh.api.get(`${fresh.base}?search=o&limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    const all = [...first.body.data, ...second.body.data].map((e: { id: number }) => e.id);
    expect(all).toEqual((await find('o')).slice(0, all.length));
    expect(new Set(all).size).toBe(all.length);
  });

  it('422 too_long above 200 characters', async () => {
    const res = await fresh.api.get(`${fresh.base}?search=${'x'.repeat(201)}`);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('too_long');
  });
});

describe('GET /accounts/<account_id>/expenses?extraction_status=', () => {
  let fresh: { api: Api; base: string; ws: Workspace };
  beforeAll(async () => {
    fresh = await freshWorkspace();
    for (let i = 0; i < 3; i++) await fresh.api.post(fresh.base, { expense: { note: `manual ${i}` } });
  });
  const count = async (query: string) => {
    const res = await fresh.api.get(`${fresh.base}?${query}`);
    expect(res.status).toBe(200);
    return res.body.data.length;
  };

  it('one value or a comma list (case-insensitive, spaces ignored); repeated parameters combine', async () => {
    expect(await count('extraction_status=manual')).toBe(3);
    expect(await count('extraction_status=pending')).toBe(0);
    expect(await count('extraction_status=pending,failed')).toBe(0);
    expect(await count(`extraction_status=${encodeURIComponent(' Pending , MANUAL ')}`)).toBe(3);
    expect(await count('extraction_status=pending&extraction_status=manual')).toBe(3);
  });

  it('unknown values are dropped silently; when none is left the filter is absent', async () => {
    expect(await count('extraction_status=pending,bogus')).toBe(0);
    expect(await count('extraction_status=bogus')).toBe(3);
    expect(await count('extraction_status=bogus,,%20')).toBe(3);
    expect(await count('extraction_status=')).toBe(3);
  });

  it('combines with pagination: the cursor is bound to the status set', async () => {
    const first = await fresh.api.get(`${fresh.base}?extraction_status=manual&limit=2`);
    const next = encodeURIComponent(first.body.next_cursor);
    expect((await fresh.api.get(`${fresh.base}?extraction_status=manual&limit=2&cursor=${next}`)).body.data).toHaveLength(1);
    expect((await fresh.api.get(`${fresh.base}?extraction_status=MANUAL,bogus&limit=2&cursor=${next}`)).status).toBe(200);
    expect((await fresh.api.get(`${fresh.base}?extraction_status=manual,pending&limit=2&cursor=${next}`)).status).toBe(422);
  });
});

describe('scopes (spec §5)', () => {
  it('read:expenses reads; writes need write:expenses (403 insufficient_scope naming it)', async () => {
    const created = await api.post(base, { expense: { note: 'scoped' } });
    const read = await tokenFor(system, 'live', ws.id, 'read:expenses');
    expect((await api.get(base, { token: read })).status).toBe(200);
    expect((await api.get(`${base}/${created.body.id}`, { token: read })).status).toBe(200);
    for (const res of [
      await api.post(base, {}, { token: read }),
      await api.patch(`${base}/${created.body.id}`, { expense: { note: 'x' } }, { token: read }),
      await api.delete(`${base}/${created.body.id}`, { token: read }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'insufficient_scope', required_scope: 'write:expenses' });
    }
    const none = await tokenFor(system, 'live', ws.id, 'read:invoices');
    expect((await api.get(base, { token: none })).body.error.required_scope).toBe('read:expenses');
  });

  it('write:expenses creates and updates; a supplier_id also needs read:contacts, an inline supplier write:contacts', async () => {
    const supplier = await contact('Scoped Supplier');
    const write = await tokenFor(system, 'live', ws.id, 'write:expenses');
    const plain = await api.post(base, { expense: { note: 'w' } }, { token: write });
    expect(plain.status).toBe(201);
    const linked = await api.post(base, { expense: { supplier_id: supplier.id } }, { token: write });
    expect(linked.status).toBe(403);
    expect(linked.body.error.required_scope).toBe('read:contacts');
    const unlinking = await api.patch(`${base}/${plain.body.id}`, { expense: { supplier_id: null } }, { token: write });
    expect(unlinking.status).toBe(200);
    const inline = await api.post(base, { invoice_account: { name: 'Inline' } }, { token: write });
    expect(inline.status).toBe(403);
    expect(inline.body.error.required_scope).toBe('write:contacts');
    const both = await tokenFor(system, 'live', ws.id, 'write:expenses,read:contacts,write:contacts');
    expect((await api.post(base, { expense: { supplier_id: supplier.id } }, { token: both })).status).toBe(201);
    expect((await api.post(base, { invoice_account: { name: 'Inline' } }, { token: both })).status).toBe(201);
  });

  it('a workspace token of another workspace is 403 account_mismatch', async () => {
    const other = await createWorkspace(system, 'Mismatch s.r.o.');
    const theirs = await tokenFor(system, 'live', other.id, 'read:expenses');
    const res = await api.get(base, { token: theirs });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('account_mismatch');
  });
});

describe('workspace gating', () => {
  it('402 without an active subscription; 403 workspace_suspended on writes of a suspended workspace, reads still work', async () => {
    const gated = await freshWorkspace();
    const created = await gated.api.post(gated.base, { expense: { note: 'before' } });
    await system.cli('plan', 'set', '--workspace', String(gated.ws.id), '--active', 'false');
    // Until every gateway has applied the change (each evicts its cache on the bus event on its own).
    await eventually(() =>
      onEveryGateway(system.baseUrls, gated.api, async (api) => {
        const res = await api.get(gated.base);
        expect(res.status).toBe(402);
        expect(res.body.error.code).toBe('subscription_inactive');
      }),
    );
    expect((await gated.api.post(gated.base, {})).status).toBe(402);
    await system.cli('plan', 'set', '--workspace', String(gated.ws.id), '--active', 'true');
    await system.cli('workspace', 'suspend', '--workspace', String(gated.ws.id));
    await eventually(() => onEveryGateway(system.baseUrls, gated.api, async (api) => expect((await api.post(gated.base, {})).status).toBe(403)));
    for (const res of [
      await gated.api.patch(`${gated.base}/${created.body.id}`, { expense: { note: 'x' } }),
      await gated.api.delete(`${gated.base}/${created.body.id}`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('workspace_suspended');
    }
    expect((await gated.api.get(`${gated.base}/${created.body.id}`)).status).toBe(200);
    expect((await gated.api.get(gated.base)).status).toBe(200);
  });
});
