// Domain records ⇄ generated proto messages.
import {
  Expense,
  ExpenseInput as ExpenseInputMessage,
  ExtractionStatus as ExtractionStatusMessage,
  SupplierInput,
} from '../../../gen/invoicing/expenses/v1/expenses';
import { ExpenseInput } from '../domain/fields';
import { ExpenseView } from '../domain/expenses';
import { confidenceOf, ExtractionStatus } from '../ports/expenses-store';
import { InlineSupplier } from '../ports/suppliers';

const STATUS_MESSAGE: Record<ExtractionStatus, ExtractionStatusMessage> = {
  pending: ExtractionStatusMessage.EXTRACTION_STATUS_PENDING,
  processing: ExtractionStatusMessage.EXTRACTION_STATUS_PROCESSING,
  completed: ExtractionStatusMessage.EXTRACTION_STATUS_COMPLETED,
  failed: ExtractionStatusMessage.EXTRACTION_STATUS_FAILED,
  manual: ExtractionStatusMessage.EXTRACTION_STATUS_MANUAL,
};

export const toStatusMessage = (s: ExtractionStatus): ExtractionStatusMessage => STATUS_MESSAGE[s];

/** The statuses a request names; UNSPECIFIED and unknown numbers are dropped. */
export function fromStatusMessages(values: ExtractionStatusMessage[]): ExtractionStatus[] {
  return (Object.keys(STATUS_MESSAGE) as ExtractionStatus[]).filter((s) => values.includes(STATUS_MESSAGE[s]));
}

const opt = <T>(value: T | null): T | undefined => (value === null ? undefined : value);
/** The RPC spells "clear" as an empty string (id 0). */
const clearable = (value: string | undefined): string | null | undefined => (value === '' ? null : value);

export function fromExpenseInput(input: ExpenseInputMessage | undefined): ExpenseInput {
  if (!input) return {};
  return {
    issue_date: clearable(input.issue_date),
    due_date: clearable(input.due_date),
    supplier_id: input.supplier_id === 0 ? null : input.supplier_id,
    document_number: clearable(input.document_number),
    variable_symbol: clearable(input.variable_symbol),
    note: clearable(input.note),
    currency: clearable(input.currency),
    items: input.expense_items_attributes.map((it) => ({
      id: it.id || undefined,
      name: it.name,
      quantity: it.quantity,
      unit_price: it.unit_price,
      vat_rate: it.vat_rate,
      destroy: it.destroy,
    })),
  };
}

export function fromSupplierInput(input: SupplierInput | undefined): InlineSupplier | undefined {
  if (!input) return undefined;
  return { contact_name: input.contact_name, invoice_account: { ...(input.invoice_account ?? {}) } };
}

export function toExpenseMessage(r: ExpenseView): Expense {
  const s = r.supplier;
  return {
    id: r.id,
    supplier_id: opt(r.supplier_id),
    supplier: s
      ? {
          name: opt(s.name),
          registration_id: opt(s.registration_id),
          tax_id: opt(s.tax_id),
          vat_id: opt(s.vat_id),
          address: {
            street: opt(s.address.street),
            municipality: opt(s.address.municipality),
            postal_code: opt(s.address.postal_code),
            country_alpha2: opt(s.address.country_alpha2),
          },
        }
      : undefined,
    document_number: opt(r.document_number),
    variable_symbol: opt(r.variable_symbol),
    note: opt(r.note),
    issue_date: opt(r.issue_date),
    due_date: opt(r.due_date),
    currency: opt(r.currency),
    subtotal: opt(r.totals.subtotal),
    vat_total: opt(r.totals.vat_total),
    total: opt(r.totals.total),
    vat_breakdown: r.totals.vat_breakdown.map((v) => ({ rate: v.vat_rate, base: v.base, vat: v.vat })),
    iban: opt(r.iban),
    bic: opt(r.bic),
    line_items: r.items.map((it) => ({ id: it.id, name: it.name, quantity: it.quantity, unit_price: it.unit_price, vat_rate: it.vat_rate, total: it.net_amount })),
    extraction_status: toStatusMessage(r.extraction_status),
    job_id: opt(r.job_id),
    rejected_job_id: opt(r.rejected_job_id),
    file: r.file ? { filename: r.file.filename, content_type: r.file.content_type, size: r.file.size } : undefined,
    confidence: confidenceOf(r.confidence),
    extraction_failure: r.extraction_status === 'failed' && r.extraction_job?.failure ? r.extraction_job.failure : undefined,
    deleted: opt(r.deleted),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
