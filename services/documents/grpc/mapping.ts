// Domain records and views ⇄ generated proto messages.
import { Address } from '../../../gen/invoicing/common/v1/common';
import {
  Document,
  DocumentInput as DocumentInputMessage,
  DocumentRef as DocumentRefMessage,
  DocumentSettings,
  DocumentType,
  Party,
} from '../../../gen/invoicing/documents/v1/documents';
import { fail } from '../../shared/errors';
import { DocumentRef, DocumentView } from '../domain/context';
import { DocumentInput } from '../domain/fields';
import { ResolvedSettings } from '../domain/settings';
import { AddressData, DocType, PartyData } from '../ports/documents-store';

const TYPE_OF: Record<number, DocType> = {
  [DocumentType.DOCUMENT_TYPE_INVOICE]: 'invoice',
  [DocumentType.DOCUMENT_TYPE_CREDIT_NOTE]: 'credit_note',
  [DocumentType.DOCUMENT_TYPE_PROFORMA]: 'proforma',
  [DocumentType.DOCUMENT_TYPE_QUOTE]: 'quote',
};
const MESSAGE_TYPE: Record<DocType, DocumentType> = {
  invoice: DocumentType.DOCUMENT_TYPE_INVOICE,
  credit_note: DocumentType.DOCUMENT_TYPE_CREDIT_NOTE,
  proforma: DocumentType.DOCUMENT_TYPE_PROFORMA,
  quote: DocumentType.DOCUMENT_TYPE_QUOTE,
};

export function docType(type: DocumentType): DocType {
  const value = TYPE_OF[type];
  if (!value) throw fail.invalid('invalid_type', 'a document type is required', 'type');
  return value;
}

export const toDocumentType = (type: DocType): DocumentType => MESSAGE_TYPE[type];

const toAddress = (a: AddressData | null): Address | undefined => (a ? { ...a } : undefined);

function toParty(p: PartyData | null): Party | undefined {
  if (!p) return undefined;
  return { ...p, address: toAddress(p.address), postal_address: toAddress(p.postal_address) };
}

const toRef = (r: DocumentRef): DocumentRefMessage => ({ id: r.id, type: MESSAGE_TYPE[r.type], number: r.number ?? undefined, status: r.status });

const opt = <T>(value: T | null): T | undefined => (value === null ? undefined : value);

export function toDocumentMessage(view: DocumentView): Document {
  const d = view.record;
  return {
    id: d.id,
    type: MESSAGE_TYPE[d.type],
    number: opt(d.number),
    status: d.status,
    purchaser_id: d.purchaser_id ?? 0,
    purchaser: toParty(d.purchaser),
    supplier: toParty(d.supplier),
    issue_date: d.issue_date,
    due_date: opt(d.due_date),
    delivery_date: opt(d.delivery_date),
    currency: d.currency,
    exchange_rate: d.exchange_rate,
    pdf_language: d.pdf_language,
    variable_symbol: opt(d.variable_symbol),
    bank_account_id: opt(d.bank_account_id),
    bank_account: d.bank_account ?? undefined,
    note: opt(d.note),
    line_items: d.line_items,
    subtotal: d.totals.subtotal,
    vat_breakdown: d.totals.vat_breakdown,
    vat_total: d.totals.vat_total,
    total: d.totals.total,
    amount_due: view.amount_due,
    paid_on: opt(d.paid_on),
    email_sent_at: opt(d.email_sent_at),
    email_status: opt(d.email_status ?? null),
    email_error: opt(d.email_error ?? null),
    accepted_at: opt(d.accepted_at),
    invoice: view.invoice ? toRef(view.invoice) : undefined,
    proforma_id: opt(d.proforma_id),
    quote_id: opt(d.quote_id),
    derived: view.derived.map(toRef),
    created_at: d.created_at,
    updated_at: d.updated_at,
    issued_at: opt(d.issued_at),
    credited_amount: view.credited_amount,
    buyer_reference: opt(d.buyer_reference ?? null),
    order_reference: opt(d.order_reference ?? null),
    contract_reference: opt(d.contract_reference ?? null),
    accounting_currency: opt(d.accounting_currency ?? null),
    deleted: opt(d.deleted),
  };
}

/** Set-but-empty strings and zero ids clear a field (null); unset fields stay undefined. */
const clearable = (value: string | undefined) => (value === undefined ? undefined : value === '' ? null : value);
const clearableId = (value: number | undefined) => (value === undefined ? undefined : value === 0 ? null : value);

export function fromDocumentInput(input: DocumentInputMessage | undefined): DocumentInput {
  if (!input) return {};
  return {
    purchaser_id: clearableId(input.purchaser_id),
    issue_date: clearable(input.issue_date),
    due_date: clearable(input.due_date),
    delivery_date: clearable(input.delivery_date),
    currency: clearable(input.currency),
    exchange_rate: clearable(input.exchange_rate),
    pdf_language: clearable(input.pdf_language),
    variable_symbol: clearable(input.variable_symbol),
    bank_account_id: clearableId(input.bank_account_id),
    note: clearable(input.note),
    line_items: input.line_items?.items.map((l) => ({
      name: l.name,
      description: l.description,
      quantity: l.quantity,
      unit: l.unit,
      unit_price: l.unit_price,
      vat_rate: l.vat_rate,
      discount: l.discount,
    })),
    invoice_id: clearableId(input.invoice_id),
    paid_on: clearable(input.paid_on),
    buyer_reference: clearable(input.buyer_reference),
    order_reference: clearable(input.order_reference),
    contract_reference: clearable(input.contract_reference),
  };
}

export function toSettingsMessage(s: { number_format: string; currency: string; locale: string } | ResolvedSettings): DocumentSettings {
  return { number_format: s.number_format, currency: s.currency, locale: s.locale };
}
