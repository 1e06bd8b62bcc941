// The expenses service's records and the store port it persists them through.
import type { ActionsUnderKeys, CreatedUnderKey } from '../../shared/idempotency';
import type { OutboxFields } from '../../shared/outbox/entries';
import { Collection, StoredDoc } from '../../shared/store/port';
import type { PricedAmounts, VatRateTotal } from '../../shared/totals';

/** Spec §3. `manual`: the fields are entered by hand (created through the JSON endpoint); no extraction runs. */
export const EXTRACTION_STATUSES = ['pending', 'processing', 'completed', 'failed', 'manual'] as const;
export type ExtractionStatus = (typeof EXTRACTION_STATUSES)[number];

/** A line of the expense, priced by the shared money rules (services/shared/totals.ts); discount is always 0. */
export interface ExpenseItemData extends PricedAmounts {
  /** Unique within its expense, never reused (next_item_id). */
  id: number;
  name: string;
}

export interface SupplierAddressData {
  street: string | null;
  municipality: string | null;
  postal_code: string | null;
  country_alpha2: string | null;
}

/** The supplier as the expense's document prints it (what extraction read). */
export interface PrintedSupplierData {
  name: string | null;
  registration_id: string | null;
  tax_id: string | null;
  vat_id: string | null;
  address: SupplierAddressData;
}

/** Totals of the expense: derived from its items when it has any, else what extraction read (or null). */
export interface ExpenseTotals {
  subtotal: string | null;
  vat_total: string | null;
  total: string | null;
  vat_breakdown: VatRateTotal[];
}

export interface ExpenseFileData {
  filename: string;
  content_type: 'application/pdf' | 'image/jpeg' | 'image/png' | 'image/gif';
  size: number;
  /** Where the bytes are in the blob store. */
  blob_key: string;
}

/** The extraction job's bookkeeping (domain/extraction-job.ts); absent on expenses never extracted. */
export interface ExtractionJobData {
  id: string;
  tier: 'standard' | 'escalated';
  requested_at: string;
  attempts: number;
  /** Sandbox kills counted against this job (domain/extraction-job.ts MAX_SANDBOX_KILLS); absent on older records. */
  sandbox_kills?: number;
  lease_until: number | null;
  started_at: string | null;
  finished_at: string | null;
  failure: { reason: string; message: string } | null;
}

export interface ExpenseRecord extends StoredDoc, CreatedUnderKey, ActionsUnderKeys, Partial<OutboxFields> {
  account_id: number;
  livemode: boolean;
  /** A contact of the workspace. */
  supplier_id: number | null;
  /** The key under which a PATCH creates this expense's inline supplier, until the write that links it (domain/expenses.ts). */
  supplier_pending_key?: string | null;
  /** The linked contact's name when it was linked or last written through the expense (for search). */
  supplier_contact_name: string | null;
  supplier: PrintedSupplierData | null;
  document_number: string | null;
  variable_symbol: string | null;
  note: string | null;
  issue_date: string | null;
  due_date: string | null;
  currency: string | null;
  iban: string | null;
  bic: string | null;
  items: ExpenseItemData[];
  next_item_id: number;
  totals: ExpenseTotals;
  extraction_status: ExtractionStatus;
  job_id: string | null;
  rejected_job_id: string | null;
  file: ExpenseFileData | null;
  extraction_job?: ExtractionJobData | null;
  /** Epoch ms of the last completed extraction (the retry cooldown counts from it). */
  extraction_completed_at?: number | null;
  /** The pending job's place in its workspace's queue (domain/extraction-job.ts jobRank). */
  job_rank?: number | null;
  /** Confidence in [0, 1] per extracted field (dotted path). */
  confidence: Record<string, number>;
  /** issue_date, or NO_ISSUE_DATE: the list's sort key (domain/listing.ts). */
  sort_date: string;
  /** The folded text `search` matches (domain/listing.ts). */
  search_text: string;
  created_at: string;
  updated_at: string;
  deleted: string | null;
}

/**
 * The write-ahead record of an upload (domain/upload-sweeper.ts): written before the file's blob, under
 * the id the expense will have. `pending` until the upload's expense is written (`done`), or until the
 * sweeper claimed the id and deleted the blob (`swept`).
 */
export interface PendingUploadRecord extends StoredDoc {
  account_id: number;
  livemode: boolean;
  blob_key: string;
  state: 'pending' | 'done' | 'swept';
  /** Epoch ms the upload began: the grace period counts from it. */
  started_at: number;
}

export interface ExpensesStore {
  expenses: Collection<ExpenseRecord>;
  /** Id = the id of the expense the upload creates. */
  uploads: Collection<PendingUploadRecord>;
  nextId(sequence: string): Promise<number>;
}

/** Confidence keys are dotted paths (`supplier.vat_id`); MongoDB-compatible stores refuse dots in field
 * names, so they are stored with U+FF0E (fullwidth full stop) and read back as dots. */
const STORED_DOT = '\uff0e';
export const storedConfidence = (confidence: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(confidence).map(([key, value]) => [key.split('.').join(STORED_DOT), value]));
export const confidenceOf = (stored: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(stored).map(([key, value]) => [key.split(STORED_DOT).join('.'), value]));
