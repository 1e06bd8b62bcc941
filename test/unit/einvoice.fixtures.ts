// Documents as the rendering service reads them, for the e-invoice mapping's unit tests: the rendering
// tests' printable document (rendering.fixtures.ts) with two rates, a discount and domestic parties.
import { PrintableDocument, PrintedParty } from '../../services/rendering/ports/document-source';
import { printable as printableBase } from './rendering.fixtures';

export const CZ_SELLER: PrintedParty = {
  name: 'ACME s.r.o.',
  registration_id: '27074358',
  tax_id: 'CZ27074358',
  vat_id: 'CZ27074358',
  email: 'billing@acme.example',
  phone: '+420 777 123 456',
  address: { name: 'ACME s.r.o.', street: 'Václavské náměstí 1', municipality: 'Praha', postal_code: '11000', country_alpha2: 'cz' },
};

export const DE_BUYER: PrintedParty = {
  name: 'Kunde GmbH',
  registration_id: 'HRB 12345',
  tax_id: '',
  vat_id: 'DE811907980',
  email: 'ap@kunde.example',
  phone: '',
  address: { name: 'Kunde GmbH', street: 'Hauptstraße 5', municipality: 'Berlin', postal_code: '10115', country_alpha2: 'de' },
};

export const CZ_BUYER: PrintedParty = {
  name: 'Customer a.s.',
  registration_id: '45317054',
  tax_id: 'CZ45317054',
  vat_id: 'CZ45317054',
  email: '',
  phone: '',
  address: { name: 'Customer a.s.', street: 'Na Příkopě 2', municipality: 'Brno', postal_code: '60200', country_alpha2: 'cz' },
};

export function printable(overrides: Partial<PrintableDocument> = {}): PrintableDocument {
  return printableBase({
    id: 7,
    number: '2026000001',
    supplier: CZ_SELLER,
    purchaser: CZ_BUYER,
    variable_symbol: '2026031',
    bank_account: { name: 'Fio banka', iban: 'CZ65 0800 0000 1920 0014 5399', account_number: '', bank_code: '', swift: 'GIBACZPX' },
    note: 'Děkujeme za spolupráci & <včas>',
    line_items: [
      { name: 'Vývoj software', description: '', quantity: '10', unit: 'hod', unit_price: '1250.50', vat_rate: '21', discount: '0', net_amount: '12505.00' },
      { name: 'Kniha', description: 'brožovaná', quantity: '2', unit: 'ks', unit_price: '300.00', vat_rate: '12', discount: '10', net_amount: '540.00' },
    ],
    subtotal: '13045.00',
    vat_breakdown: [
      { vat_rate: '21', base: '12505.00', vat: '2626.05' },
      { vat_rate: '12', base: '540.00', vat: '64.80' },
    ],
    vat_total: '2690.85',
    total: '15735.85',
    credited_amount: '0.00',
    amount_due: '15735.85',
    ...overrides,
  });
}
