// Spec §2 Expense, §4 Expenses (list, create, read, update, soft delete), §5 scopes, and the pagination
// rules for expenses. Upload, the file download and retry_extraction are tested with the job machinery.
import { Api } from '../support/api';
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
