// EN 16931 in UBL 2.1: an Invoice (380) or a CreditNote (381), elements in the XSD's sequence order.
// BT numbers name what each element carries (docs/e-invoicing.md "Mapping").
import { EInvoice, ELine, EParty } from './model';
import { el, serialize, text, XmlChild, XmlNode } from './xml';

const NS = {
  invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  credit_note: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
};

/** BT-24: the EN 16931 core specification, without a CIUS. */
export const EN16931_CUSTOMIZATION = 'urn:cen.eu:en16931:2017';

function postalAddress(p: EParty): XmlNode {
  return el(
    'cac:PostalAddress',
    text('cbc:StreetName', p.address.street),
    text('cbc:CityName', p.address.city),
    text('cbc:PostalZone', p.address.postalCode),
    el('cac:Country', text('cbc:IdentificationCode', p.address.country)),
  );
}

export const isZero = (amount: string) => /^-?0(\.0+)?$/.test(amount);

const vatScheme = () => el('cac:TaxScheme', text('cbc:ID', 'VAT'));

function party(p: EParty, role: 'seller' | 'buyer'): XmlNode {
  return el(
    'cac:Party',
    el('cac:PartyName', text('cbc:Name', p.name)),
    postalAddress(p),
    // BT-31 / BT-48
    p.vatId ? el('cac:PartyTaxScheme', text('cbc:CompanyID', p.vatId), vatScheme()) : null,
    // BT-32: the seller's tax registration identifier, in a scheme other than VAT.
    role === 'seller' && p.taxId && p.taxId !== p.vatId
      ? el('cac:PartyTaxScheme', text('cbc:CompanyID', p.taxId), el('cac:TaxScheme', text('cbc:ID', 'FC')))
      : null,
    // BT-27 / BT-44, BT-30 / BT-47
    el('cac:PartyLegalEntity', text('cbc:RegistrationName', p.name), text('cbc:CompanyID', p.registrationId)),
    p.email || p.phone ? el('cac:Contact', text('cbc:Telephone', p.phone), text('cbc:ElectronicMail', p.email)) : null,
  );
}

function taxCategory(name: 'cac:TaxCategory' | 'cac:ClassifiedTaxCategory', category: string, rate: string | null, exemption: XmlChild[] = []): XmlNode {
  return el(name, text('cbc:ID', category), text('cbc:Percent', rate), ...exemption, vatScheme());
}

function invoiceLine(inv: EInvoice, l: ELine): XmlNode {
  const money = (name: string, v: string) => text(name, v, { currencyID: inv.currency });
  const credit = inv.kind === 'credit_note';
  return el(
    credit ? 'cac:CreditNoteLine' : 'cac:InvoiceLine',
    text('cbc:ID', l.id),
    text(credit ? 'cbc:CreditedQuantity' : 'cbc:InvoicedQuantity', l.quantity, { unitCode: l.unitCode }),
    money('cbc:LineExtensionAmount', l.net),
    l.allowance
      ? el(
          'cac:AllowanceCharge',
          text('cbc:ChargeIndicator', 'false'),
          text('cbc:AllowanceChargeReasonCode', '95'),
          text('cbc:AllowanceChargeReason', 'Discount'),
          text('cbc:MultiplierFactorNumeric', l.allowance.percent),
          money('cbc:Amount', l.allowance.amount),
          money('cbc:BaseAmount', l.allowance.base),
        )
      : null,
    el('cac:Item', text('cbc:Description', l.description), text('cbc:Name', l.name), taxCategory('cac:ClassifiedTaxCategory', l.category, l.rate)),
    el('cac:Price', money('cbc:PriceAmount', l.price)),
  );
}

export function ublXml(inv: EInvoice): string {
  const credit = inv.kind === 'credit_note';
  const money = (name: string, v: string) => text(name, v, { currencyID: inv.currency });
  const pay = inv.payment;
  const root = el(
    credit ? 'CreditNote' : 'Invoice',
    { xmlns: credit ? NS.credit_note : NS.invoice, 'xmlns:cac': NS.cac, 'xmlns:cbc': NS.cbc },
    text('cbc:CustomizationID', EN16931_CUSTOMIZATION),
    text('cbc:ID', inv.number),
    text('cbc:IssueDate', inv.issueDate),
    credit ? null : text('cbc:DueDate', inv.dueDate),
    text(credit ? 'cbc:CreditNoteTypeCode' : 'cbc:InvoiceTypeCode', credit ? '381' : '380'),
    text('cbc:Note', inv.note),
    text('cbc:DocumentCurrencyCode', inv.currency),
    text('cbc:TaxCurrencyCode', inv.taxCurrency?.code),
    text('cbc:BuyerReference', inv.buyerReference),
    inv.orderReference ? el('cac:OrderReference', text('cbc:ID', inv.orderReference)) : null,
    inv.precedingInvoice ? el('cac:BillingReference', el('cac:InvoiceDocumentReference', text('cbc:ID', inv.precedingInvoice))) : null,
    inv.contractReference ? el('cac:ContractDocumentReference', text('cbc:ID', inv.contractReference)) : null,
    el('cac:AccountingSupplierParty', party(inv.seller, 'seller')),
    el('cac:AccountingCustomerParty', party(inv.buyer, 'buyer')),
    inv.deliveryDate ? el('cac:Delivery', text('cbc:ActualDeliveryDate', inv.deliveryDate)) : null,
    pay
      ? el(
          'cac:PaymentMeans',
          text('cbc:PaymentMeansCode', pay.meansCode),
          text('cbc:PaymentID', pay.paymentId),
          el(
            'cac:PayeeFinancialAccount',
            text('cbc:ID', pay.account),
            text('cbc:Name', pay.accountName),
            pay.bic ? el('cac:FinancialInstitutionBranch', text('cbc:ID', pay.bic)) : null,
          ),
        )
      : null,
    inv.paymentTerms ? el('cac:PaymentTerms', text('cbc:Note', inv.paymentTerms)) : null,
    el(
      'cac:TaxTotal',
      money('cbc:TaxAmount', inv.totals.vat),
      ...inv.vat.map((row) =>
        el(
          'cac:TaxSubtotal',
          money('cbc:TaxableAmount', row.base),
          money('cbc:TaxAmount', row.vat),
          taxCategory('cac:TaxCategory', row.category, row.rate, [
            text('cbc:TaxExemptionReasonCode', row.exemptionCode),
            text('cbc:TaxExemptionReason', row.exemptionReason),
          ]),
        ),
      ),
    ),
    // BT-111: the VAT total in the accounting currency, a TaxTotal of its own without a breakdown.
    inv.taxCurrency ? el('cac:TaxTotal', text('cbc:TaxAmount', inv.taxCurrency.vat, { currencyID: inv.taxCurrency.code })) : null,
    el(
      'cac:LegalMonetaryTotal',
      money('cbc:LineExtensionAmount', inv.totals.lineNet),
      money('cbc:TaxExclusiveAmount', inv.totals.taxExclusive),
      money('cbc:TaxInclusiveAmount', inv.totals.taxInclusive),
      // BT-113 only once something is paid (an unpaid invoice has none).
      isZero(inv.totals.prepaid) ? null : money('cbc:PrepaidAmount', inv.totals.prepaid),
      money('cbc:PayableAmount', inv.totals.payable),
    ),
    ...inv.lines.map((l) => invoiceLine(inv, l)),
  );
  return serialize(root);
}
