// Expense messages → the JSON the API returns (spec §2 Expense). Optional proto fields become explicit nulls.
import { Expense, ExpenseSupplier, ExtractionStatus } from '../../gen/invoicing/expenses/v1/expenses';

export const EXTRACTION_STATUS_NAMES: Record<string, ExtractionStatus> = {
  pending: ExtractionStatus.EXTRACTION_STATUS_PENDING,
  processing: ExtractionStatus.EXTRACTION_STATUS_PROCESSING,
  completed: ExtractionStatus.EXTRACTION_STATUS_COMPLETED,
  failed: ExtractionStatus.EXTRACTION_STATUS_FAILED,
  manual: ExtractionStatus.EXTRACTION_STATUS_MANUAL,
};

const STATUS_NAME = new Map(Object.entries(EXTRACTION_STATUS_NAMES).map(([name, value]) => [value, name]));

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

function presentSupplier(s: ExpenseSupplier | undefined) {
  if (!s) return null;
  return {
    name: orNull(s.name),
    registration_id: orNull(s.registration_id),
    tax_id: orNull(s.tax_id),
    vat_id: orNull(s.vat_id),
    address: {
      street: orNull(s.address?.street),
      municipality: orNull(s.address?.municipality),
      postal_code: orNull(s.address?.postal_code),
      country_alpha2: orNull(s.address?.country_alpha2),
    },
  };
}

export function presentExpense(e: Expense) {
  return {
    id: e.id,
    supplier_id: orNull(e.supplier_id),
    supplier: presentSupplier(e.supplier),
    document_number: orNull(e.document_number),
    variable_symbol: orNull(e.variable_symbol),
    note: orNull(e.note),
    issue_date: orNull(e.issue_date),
    due_date: orNull(e.due_date),
    currency: orNull(e.currency),
    subtotal: orNull(e.subtotal),
    vat_total: orNull(e.vat_total),
    total: orNull(e.total),
    vat_breakdown: e.vat_breakdown.map((v) => ({ rate: v.rate, base: v.base, vat: v.vat })),
    iban: orNull(e.iban),
    bic: orNull(e.bic),
    line_items: e.line_items.map((it) => ({ id: it.id, name: it.name, quantity: it.quantity, unit_price: it.unit_price, vat_rate: it.vat_rate, total: it.total })),
    extraction_status: STATUS_NAME.get(e.extraction_status) ?? 'manual',
    job_id: orNull(e.job_id),
    rejected_job_id: orNull(e.rejected_job_id),
    file: e.file ? { filename: e.file.filename, content_type: e.file.content_type, size: e.file.size } : null,
    confidence: e.confidence,
    extraction_failure: e.extraction_failure ? { reason: e.extraction_failure.reason, message: e.extraction_failure.message } : null,
    created_at: e.created_at,
    updated_at: e.updated_at,
    deleted: orNull(e.deleted),
  };
}
