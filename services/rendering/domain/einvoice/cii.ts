// EN 16931 in UN/CEFACT Cross Industry Invoice D16B: the same model as ubl.ts, elements in the XSD's
// sequence order (docs/e-invoicing.md "Mapping").
import { EInvoice, ELine, EParty } from './model';
import { EN16931_CUSTOMIZATION, isZero } from './ubl';
import { el, serialize, text, XmlNode } from './xml';

const NS = {
  rsm: 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
  ram: 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
  udt: 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
  qdt: 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
};

/** A date in CII's format 102 (CCYYMMDD). */
const date = (name: string, iso: string) => el(name, text('udt:DateTimeString', iso.replace(/-/g, ''), { format: '102' }));

function tradeParty(name: string, p: EParty, role: 'seller' | 'buyer'): XmlNode {
  return el(
    name,
    text('ram:Name', p.name),
    // BT-30 / BT-47
    p.registrationId ? el('ram:SpecifiedLegalOrganization', text('ram:ID', p.registrationId)) : null,
    p.email || p.phone
      ? el(
          'ram:DefinedTradeContact',
          p.phone ? el('ram:TelephoneUniversalCommunication', text('ram:CompleteNumber', p.phone)) : null,
          p.email ? el('ram:EmailURIUniversalCommunication', text('ram:URIID', p.email)) : null,
        )
      : null,
    el(
      'ram:PostalTradeAddress',
      text('ram:PostcodeCode', p.address.postalCode),
      text('ram:LineOne', p.address.street),
      text('ram:CityName', p.address.city),
      text('ram:CountryID', p.address.country),
    ),
    // BT-31 / BT-48 (VA), BT-32 (FC)
    p.vatId ? el('ram:SpecifiedTaxRegistration', text('ram:ID', p.vatId, { schemeID: 'VA' })) : null,
    role === 'seller' && p.taxId && p.taxId !== p.vatId ? el('ram:SpecifiedTaxRegistration', text('ram:ID', p.taxId, { schemeID: 'FC' })) : null,
  );
}

function lineItem(l: ELine): XmlNode {
  return el(
    'ram:IncludedSupplyChainTradeLineItem',
    el('ram:AssociatedDocumentLineDocument', text('ram:LineID', l.id)),
    el('ram:SpecifiedTradeProduct', text('ram:Name', l.name), text('ram:Description', l.description)),
    el('ram:SpecifiedLineTradeAgreement', el('ram:NetPriceProductTradePrice', text('ram:ChargeAmount', l.price))),
    el('ram:SpecifiedLineTradeDelivery', text('ram:BilledQuantity', l.quantity, { unitCode: l.unitCode })),
    el(
      'ram:SpecifiedLineTradeSettlement',
      el('ram:ApplicableTradeTax', text('ram:TypeCode', 'VAT'), text('ram:CategoryCode', l.category), text('ram:RateApplicablePercent', l.rate)),
      l.allowance
        ? el(
            'ram:SpecifiedTradeAllowanceCharge',
            el('ram:ChargeIndicator', text('udt:Indicator', 'false')),
            text('ram:CalculationPercent', l.allowance.percent),
            text('ram:BasisAmount', l.allowance.base),
            text('ram:ActualAmount', l.allowance.amount),
            text('ram:ReasonCode', '95'),
            text('ram:Reason', 'Discount'),
          )
        : null,
      el('ram:SpecifiedTradeSettlementLineMonetarySummation', text('ram:LineTotalAmount', l.net)),
    ),
  );
}

export function ciiXml(inv: EInvoice): string {
  const pay = inv.payment;
  const t = inv.totals;
  const root = el(
    'rsm:CrossIndustryInvoice',
    { 'xmlns:rsm': NS.rsm, 'xmlns:ram': NS.ram, 'xmlns:udt': NS.udt, 'xmlns:qdt': NS.qdt },
    el('rsm:ExchangedDocumentContext', el('ram:GuidelineSpecifiedDocumentContextParameter', text('ram:ID', EN16931_CUSTOMIZATION))),
    el(
      'rsm:ExchangedDocument',
      text('ram:ID', inv.number),
      text('ram:TypeCode', inv.kind === 'credit_note' ? '381' : '380'),
      date('ram:IssueDateTime', inv.issueDate),
      inv.note ? el('ram:IncludedNote', text('ram:Content', inv.note)) : null,
    ),
    el(
      'rsm:SupplyChainTradeTransaction',
      ...inv.lines.map(lineItem),
      el(
        'ram:ApplicableHeaderTradeAgreement',
        text('ram:BuyerReference', inv.buyerReference),
        tradeParty('ram:SellerTradeParty', inv.seller, 'seller'),
        tradeParty('ram:BuyerTradeParty', inv.buyer, 'buyer'),
        inv.orderReference ? el('ram:BuyerOrderReferencedDocument', text('ram:IssuerAssignedID', inv.orderReference)) : null,
        inv.contractReference ? el('ram:ContractReferencedDocument', text('ram:IssuerAssignedID', inv.contractReference)) : null,
      ),
      el('ram:ApplicableHeaderTradeDelivery', inv.deliveryDate ? el('ram:ActualDeliverySupplyChainEvent', date('ram:OccurrenceDateTime', inv.deliveryDate)) : null),
      el(
        'ram:ApplicableHeaderTradeSettlement',
        text('ram:PaymentReference', pay?.paymentId),
        text('ram:TaxCurrencyCode', inv.taxCurrency?.code),
        text('ram:InvoiceCurrencyCode', inv.currency),
        pay
          ? el(
              'ram:SpecifiedTradeSettlementPaymentMeans',
              text('ram:TypeCode', pay.meansCode),
              el(
                'ram:PayeePartyCreditorFinancialAccount',
                pay.meansCode === '58' ? text('ram:IBANID', pay.account) : null,
                text('ram:AccountName', pay.accountName),
                pay.meansCode === '58' ? null : text('ram:ProprietaryID', pay.account),
              ),
              pay.bic ? el('ram:PayeeSpecifiedCreditorFinancialInstitution', text('ram:BICID', pay.bic)) : null,
            )
          : null,
        ...inv.vat.map((row) =>
          el(
            'ram:ApplicableTradeTax',
            text('ram:CalculatedAmount', row.vat),
            text('ram:TypeCode', 'VAT'),
            text('ram:ExemptionReason', row.exemptionReason),
            text('ram:BasisAmount', row.base),
            text('ram:CategoryCode', row.category),
            text('ram:ExemptionReasonCode', row.exemptionCode),
            text('ram:RateApplicablePercent', row.rate),
          ),
        ),
        inv.dueDate || inv.paymentTerms
          ? el('ram:SpecifiedTradePaymentTerms', text('ram:Description', inv.paymentTerms), inv.dueDate ? date('ram:DueDateDateTime', inv.dueDate) : null)
          : null,
        el(
          'ram:SpecifiedTradeSettlementHeaderMonetarySummation',
          text('ram:LineTotalAmount', t.lineNet),
          text('ram:TaxBasisTotalAmount', t.taxExclusive),
          text('ram:TaxTotalAmount', t.vat, { currencyID: inv.currency }),
          inv.taxCurrency ? text('ram:TaxTotalAmount', inv.taxCurrency.vat, { currencyID: inv.taxCurrency.code }) : null,
          text('ram:GrandTotalAmount', t.taxInclusive),
          isZero(t.prepaid) ? null : text('ram:TotalPrepaidAmount', t.prepaid),
          text('ram:DuePayableAmount', t.payable),
        ),
        inv.precedingInvoice ? el('ram:InvoiceReferencedDocument', text('ram:IssuerAssignedID', inv.precedingInvoice)) : null,
      ),
    ),
  );
  return serialize(root);
}
