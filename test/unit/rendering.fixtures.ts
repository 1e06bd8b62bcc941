// A printable document and workspace for the rendering domain tests.
import { PrintableDocument, Workspace } from '../../services/rendering/ports/document-source';

export const supplier = (country = 'cz') => ({
  name: country === 'sk' ? 'Dodávateľ Žilina s.r.o.' : 'ACME s.r.o.',
  registration_id: '27074358',
  tax_id: '',
  vat_id: country === 'sk' ? 'SK2020178571' : 'CZ27074358',
  email: 'billing@acme.example',
  phone: '',
  address: { name: '', street: 'Hlavní 1', municipality: country === 'sk' ? 'Žilina' : 'Praha', postal_code: '11000', country_alpha2: country },
});

export function printable(overrides: Partial<PrintableDocument> = {}): PrintableDocument {
  return {
    id: 42,
    type: 'invoice',
    number: '2026000007',
    status: 'exposed',
    supplier: supplier(),
    purchaser: { ...supplier('de'), name: 'Kunde GmbH', vat_id: 'DE136695976' },
    issue_date: '2026-03-05',
    due_date: '2026-03-19',
    delivery_date: '2026-03-04',
    currency: 'CZK',
    pdf_language: 'cs',
    variable_symbol: '2026000007',
    bank_account: { name: 'Fio', iban: 'CZ6508000000192000145399', account_number: '', bank_code: '', swift: 'GIBACZPX' },
    note: null,
    line_items: [{ name: 'Vývoj', description: '', quantity: '10', unit: 'h', unit_price: '1250.50', vat_rate: '21', discount: '0', net_amount: '12505.00' }],
    subtotal: '12505.00',
    vat_breakdown: [{ vat_rate: '21', base: '12505.00', vat: '2626.05' }],
    vat_total: '2626.05',
    total: '15131.05',
    credited_amount: '1000.00',
    amount_due: '14131.05',
    paid_on: null,
    invoice_number: null,
    updated_at: '2026-03-05T10:00:00.000Z',
    ...overrides,
  };
}

export const workspace = (overrides: Partial<Workspace> = {}): Workspace => ({ identity: supplier(), logo_key: null, ...overrides });
