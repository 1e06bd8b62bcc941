// The EN 16931 mapping of an issued document (services/rendering/domain/einvoice): VAT categories from
// rates and the parties' VAT status, exact totals, payment means, units, lines, and einvoice_incomplete
// with every missing rule. Pure; the schematron runs on the API suite's matrix (test/api/einvoice.test.ts).
import { ciiXml } from '../../services/rendering/domain/einvoice/cii';
import { einvoiceModel, unitCode, vatCategory } from '../../services/rendering/domain/einvoice/model';
import { ublXml } from '../../services/rendering/domain/einvoice/ubl';
import { el, serialize, text } from '../../services/rendering/domain/einvoice/xml';
import { DomainError } from '../../services/shared/errors';
import { CZ_BUYER, CZ_SELLER, DE_BUYER, printable } from './einvoice.fixtures';

const ZERO_RATED = {
  line_items: [{ name: 'Audit', description: '', quantity: '1', unit: '', unit_price: '100.00', vat_rate: '0', discount: '0', net_amount: '100.00' }],
  subtotal: '100.00',
  vat_breakdown: [{ vat_rate: '0', base: '100.00', vat: '0.00' }],
  vat_total: '0.00',
  total: '100.00',
  amount_due: '100.00',
};
const US_BUYER = { ...DE_BUYER, vat_id: '', address: { ...DE_BUYER.address!, country_alpha2: 'us' } };
const NON_PAYER = { ...CZ_SELLER, vat_id: '' };

function incompleteOf(run: () => unknown): Array<{ rule: string; field: string }> {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('einvoice_incomplete');
    return JSON.parse((err as DomainError).metadata.details).map((d: { rule: string; field: string }) => ({ rule: d.rule, field: d.field }));
  }
  throw new Error('expected einvoice_incomplete');
}

describe('VAT category of a rate', () => {
  const seller = einvoiceModel(printable(), CZ_SELLER).seller;
  const party = (p: typeof CZ_BUYER) => einvoiceModel(printable({ purchaser: p }), CZ_SELLER).buyer;

  it('a positive rate is standard (S)', () => {
    expect(vatCategory('21', seller, party(DE_BUYER))).toBe('S');
  });
  it('0 % to a VAT-registered buyer in another EU state is reverse charge (AE)', () => {
    expect(vatCategory('0', seller, party(DE_BUYER))).toBe('AE');
  });
  it('0 % to a buyer outside the EU is export (G)', () => {
    expect(vatCategory('0', seller, party(US_BUYER))).toBe('G');
  });
  it('0 % at home, or to an EU buyer without a VAT identifier, is exempt (E)', () => {
    expect(vatCategory('0', seller, party(CZ_BUYER))).toBe('E');
    expect(vatCategory('0', seller, party({ ...DE_BUYER, vat_id: '' }))).toBe('E');
  });
  it('0 % from a supplier without a VAT identifier is not subject to VAT (O), and the buyer VAT id is left out (BR-O-2)', () => {
    const inv = einvoiceModel(printable({ ...ZERO_RATED, supplier: NON_PAYER }), NON_PAYER);
    expect(inv.vat).toEqual([expect.objectContaining({ category: 'O', rate: null, exemptionCode: 'VATEX-EU-O' })]);
    expect(inv.buyer.vatId).toBeNull();
  });
});

describe('amounts', () => {
  it("are the document's own decimal strings; line net sum, prepaid and payable exact (BR-CO-10, BR-CO-16)", () => {
    const inv = einvoiceModel(printable(), CZ_SELLER);
    expect(inv.totals).toEqual({ lineNet: '13045.00', taxExclusive: '13045.00', vat: '2690.85', taxInclusive: '15735.85', prepaid: '0.00', payable: '15735.85' });
    expect(inv.vat.map((r) => [r.category, r.rate, r.base, r.vat])).toEqual([
      ['S', '21', '12505.00', '2626.05'],
      ['S', '12', '540.00', '64.80'],
    ]);
  });
  it('a paid invoice has the total prepaid and 0 payable', () => {
    const inv = einvoiceModel(printable({ status: 'paid', paid_on: '2026-03-10', amount_due: '0.00' }), CZ_SELLER);
    expect(inv.totals).toMatchObject({ prepaid: '15735.85', payable: '0.00' });
  });
  it('a discount is a line allowance of base − net; a deduction keeps a positive price with a negative quantity (BR-27)', () => {
    const inv = einvoiceModel(
      printable({
        line_items: [
          { name: 'Kniha', description: '', quantity: '3', unit: 'ks', unit_price: '33.33', vat_rate: '12', discount: '15', net_amount: '84.99' },
          { name: 'Sleva', description: '', quantity: '1', unit: '', unit_price: '-10.00', vat_rate: '12', discount: '0', net_amount: '-10.00' },
        ],
      }),
      CZ_SELLER,
    );
    expect(inv.lines[0].allowance).toEqual({ amount: '15.00', base: '99.99', percent: '15' });
    expect(inv.lines[1]).toMatchObject({ quantity: '-1', price: '10.00', net: '-10.00', allowance: null });
  });
});

describe('VAT accounting currency (BT-6, BT-111)', () => {
  it('a document in another currency than the workspace states its VAT total × exchange_rate in the workspace currency', () => {
    const doc = printable({ currency: 'EUR', exchange_rate: '25.125', accounting_currency: 'CZK' });
    const inv = einvoiceModel(doc, CZ_SELLER);
    // 2690.85 × 25.125 = 67607.600… → 67607.61 (rounded once, half away from zero)
    expect(inv.taxCurrency).toEqual({ code: 'CZK', vat: '67607.61' });
    expect(ublXml(inv)).toContain('<cac:TaxTotal><cbc:TaxAmount currencyID="CZK">67607.61</cbc:TaxAmount></cac:TaxTotal>');
    expect(ciiXml(inv)).toContain('<ram:TaxCurrencyCode>CZK</ram:TaxCurrencyCode><ram:InvoiceCurrencyCode>EUR</ram:InvoiceCurrencyCode>');
  });
  it('none in the workspace currency, or for a record that predates it', () => {
    expect(einvoiceModel(printable({ exchange_rate: '1', accounting_currency: null }), CZ_SELLER).taxCurrency).toBeNull();
    expect(einvoiceModel(printable({ currency: 'EUR', exchange_rate: '25' }), CZ_SELLER).taxCurrency).toBeNull();
  });
});

describe('payment means', () => {
  it('IBAN → 58 SEPA credit transfer with the BIC; the variable symbol is the payment id for CZ and SK', () => {
    expect(einvoiceModel(printable(), CZ_SELLER).payment).toEqual({
      meansCode: '58',
      account: 'CZ6508000000192000145399',
      accountName: 'Fio banka',
      bic: 'GIBACZPX',
      paymentId: '2026031',
    });
  });
  it('a domestic account number → 30 credit transfer "<number>/<bank code>"', () => {
    const doc = printable({ bank_account: { name: '', iban: '', account_number: '2001234567', bank_code: '2010', swift: '' } });
    expect(einvoiceModel(doc, CZ_SELLER).payment).toMatchObject({ meansCode: '30', account: '2001234567/2010', bic: null });
  });
  it('no variable symbol outside CZ and SK; credit notes carry no payment means but payment terms and the invoice reference', () => {
    const de = { ...CZ_SELLER, address: { ...CZ_SELLER.address!, country_alpha2: 'de' } };
    expect(einvoiceModel(printable({ supplier: de }), de).payment?.paymentId).toBeNull();
    const note = einvoiceModel(printable({ type: 'credit_note', invoice_number: '2026000001', due_date: null }), CZ_SELLER);
    expect(note).toMatchObject({ payment: null, dueDate: null, precedingInvoice: '2026000001', paymentTerms: 'Credited against invoice 2026000001' });
  });
});

describe('units (UN/ECE Rec. 20)', () => {
  it.each([
    ['hod', 'HUR'],
    ['Std.', 'HUR'],
    ['ks', 'H87'],
    ['Stück', 'H87'],
    ['kg', 'KGM'],
    ['den', 'DAY'],
    ['', 'C62'],
    ['bundle', 'C62'],
  ])('%s → %s', (unit, code) => expect(unitCode(unit)).toBe(code));
});

describe('einvoice_incomplete', () => {
  it('lists every missing rule at once, with the field as the API names it', () => {
    const doc = printable({ purchaser: { ...CZ_BUYER, address: null }, due_date: null });
    expect(incompleteOf(() => einvoiceModel(doc, { ...CZ_SELLER, registration_id: '', vat_id: '' }))).toEqual([
      { rule: 'BR-11', field: 'purchaser.address.country_alpha2' },
      { rule: 'BR-CO-26', field: 'supplier.registration_id' },
      { rule: 'BR-S-2', field: 'supplier.vat_id' },
      { rule: 'BR-CO-25', field: 'due_date' },
    ]);
  });
  it('no purchaser → BR-7 purchaser_id', () => {
    expect(incompleteOf(() => einvoiceModel(printable({ purchaser: null }), CZ_SELLER))).toEqual([{ rule: 'BR-7', field: 'purchaser_id' }]);
  });
  it('a currency with 3 decimals cannot be expressed (BR-DEC-23)', () => {
    expect(incompleteOf(() => einvoiceModel(printable({ currency: 'KWD' }), CZ_SELLER))).toEqual([{ rule: 'BR-DEC-23', field: 'currency' }]);
  });
});

describe("the buyer's references (BT-10, BT-13, BT-12)", () => {
  it('are written where each syntax carries them, and left out when absent', () => {
    const inv = einvoiceModel(printable({ buyer_reference: '04011000-12345-34', order_reference: 'PO-77', contract_reference: 'K-2026/1' }), CZ_SELLER);
    const ubl = ublXml(inv);
    expect(ubl).toContain('<cbc:BuyerReference>04011000-12345-34</cbc:BuyerReference><cac:OrderReference><cbc:ID>PO-77</cbc:ID></cac:OrderReference>');
    expect(ubl).toContain('<cac:ContractDocumentReference><cbc:ID>K-2026/1</cbc:ID></cac:ContractDocumentReference><cac:AccountingSupplierParty>');
    const cii = ciiXml(inv);
    expect(cii).toContain('<ram:ApplicableHeaderTradeAgreement><ram:BuyerReference>04011000-12345-34</ram:BuyerReference>');
    expect(cii).toContain('<ram:BuyerOrderReferencedDocument><ram:IssuerAssignedID>PO-77</ram:IssuerAssignedID></ram:BuyerOrderReferencedDocument><ram:ContractReferencedDocument><ram:IssuerAssignedID>K-2026/1</ram:IssuerAssignedID>');
    const bare = ublXml(einvoiceModel(printable(), CZ_SELLER));
    expect(bare).not.toMatch(/BuyerReference|OrderReference|ContractDocumentReference/);
  });
});

describe('XML', () => {
  it('drops characters XML 1.0 cannot carry and escapes attributes', () => {
    expect(serialize(el('a', { b: 'x"<&' }, text('c', 'tab\tbell\u0007end')))).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<a b="x&quot;&lt;&amp;"><c>tab\tbellend</c></a>\n');
    expect(serialize(el('a', text('b', null), text('c', '')))).toContain('<a/>');
  });

  it('escapes text and writes UBL Invoice / CreditNote and CII 380 / 381', () => {
    const inv = einvoiceModel(printable(), CZ_SELLER);
    const ubl = ublXml(inv);
    expect(ubl).toContain('<cbc:Note>Děkujeme za spolupráci &amp; &lt;včas&gt;</cbc:Note>');
    expect(ubl).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/);
    expect(ciiXml(inv)).toContain('<ram:TypeCode>380</ram:TypeCode>');
    const note = einvoiceModel(printable({ type: 'credit_note', invoice_number: '2026000001', due_date: null }), CZ_SELLER);
    expect(ublXml(note)).toContain('<CreditNote xmlns="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"');
    expect(ublXml(note)).toContain('<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>2026000001</cbc:ID>');
    expect(ciiXml(note)).toContain('<ram:TypeCode>381</ram:TypeCode>');
  });
});
