// Documents (proto) → the JSON the API returns: one shape per type, optional values as explicit nulls,
// money and quantities as decimal strings.
import { BankDetails, Document, DocumentRef, DocumentType, Party } from '../../gen/invoicing/documents/v1/documents';
import { presentAddress, textOrNull } from './presenters';

export const TYPE_NAME: Record<number, string> = {
  [DocumentType.DOCUMENT_TYPE_INVOICE]: 'invoice',
  [DocumentType.DOCUMENT_TYPE_CREDIT_NOTE]: 'credit_note',
  [DocumentType.DOCUMENT_TYPE_PROFORMA]: 'proforma',
  [DocumentType.DOCUMENT_TYPE_QUOTE]: 'quote',
};

function presentParty(p: Party | undefined) {
  if (!p) return null;
  return {
    name: p.name,
    registration_id: textOrNull(p.registration_id),
    tax_id: textOrNull(p.tax_id),
    vat_id: textOrNull(p.vat_id),
    email: textOrNull(p.email),
    phone: textOrNull(p.phone),
    address: presentAddress(p.address),
    postal_address: presentAddress(p.postal_address),
  };
}

function presentBank(b: BankDetails | undefined) {
  if (!b) return null;
  return { id: b.id, name: textOrNull(b.name), iban: b.iban || null, account_number: b.account_number || null, swift: b.swift || null, bank_code: b.bank_code || null };
}

const presentRef = (r: DocumentRef) => ({ id: r.id, type: TYPE_NAME[r.type], number: r.number ?? null, status: r.status });

function common(d: Document) {
  return {
    id: d.id,
    type: TYPE_NAME[d.type],
    number: d.number ?? null,
    status: d.status,
    purchaser_id: d.purchaser_id || null,
    purchaser: presentParty(d.purchaser),
    supplier: presentParty(d.supplier),
    issue_date: d.issue_date,
    due_date: d.due_date ?? null,
    delivery_date: d.delivery_date ?? null,
    currency: d.currency,
    exchange_rate: d.exchange_rate,
    pdf_language: d.pdf_language,
    variable_symbol: d.variable_symbol ?? null,
    bank_account_id: d.bank_account_id ?? null,
    bank_account: presentBank(d.bank_account),
    note: d.note ?? null,
    line_items: d.line_items.map((l) => ({
      name: l.name,
      description: l.description || null,
      quantity: l.quantity,
      unit: l.unit || null,
      unit_price: l.unit_price,
      vat_rate: l.vat_rate,
      discount: l.discount,
      net_amount: l.net_amount,
    })),
    subtotal: d.subtotal,
    vat_breakdown: d.vat_breakdown.map((v) => ({ vat_rate: v.vat_rate, base: v.base, vat: v.vat })),
    vat_total: d.vat_total,
    total: d.total,
    amount_due: d.amount_due,
  };
}

const timestamps = (d: Document) => ({ created_at: d.created_at, updated_at: d.updated_at, deleted: d.deleted ?? null });

export function presentDocument(d: Document) {
  switch (d.type) {
    case DocumentType.DOCUMENT_TYPE_INVOICE:
      return {
        ...common(d),
        credited_amount: d.credited_amount,
        paid_on: d.paid_on ?? null,
        email_sent_at: d.email_sent_at ?? null,
        email_status: d.email_status ?? null,
        email_error: d.email_error ?? null,
        issued_at: d.issued_at ?? null,
        proforma_id: d.proforma_id ?? null,
        quote_id: d.quote_id ?? null,
        buyer_reference: d.buyer_reference ?? null,
        order_reference: d.order_reference ?? null,
        contract_reference: d.contract_reference ?? null,
        ...timestamps(d),
      };
    case DocumentType.DOCUMENT_TYPE_CREDIT_NOTE:
      return {
        ...common(d),
        invoice_id: d.invoice?.id ?? null,
        invoice: d.invoice ? { id: d.invoice.id, number: d.invoice.number ?? null, status: d.invoice.status } : null,
        issued_at: d.issued_at ?? null,
        ...timestamps(d),
      };
    case DocumentType.DOCUMENT_TYPE_PROFORMA:
      return {
        ...common(d),
        paid_on: d.paid_on ?? null,
        issued_at: d.issued_at ?? null,
        invoices: d.derived.map(presentRef),
        quote_id: d.quote_id ?? null,
        ...timestamps(d),
      };
    default:
      return { ...common(d), accepted_at: d.accepted_at ?? null, documents: d.derived.map(presentRef), ...timestamps(d) };
  }
}
