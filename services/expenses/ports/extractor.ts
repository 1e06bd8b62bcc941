// The extraction port: reads an expense's fields out of its file, offline. The expenses service owns the
// job state machine (pending → processing → completed | failed) and calls this port off the request
// path; the adapters (text layer, OCR, an optional OpenAI-compatible provider) live in
// services/expenses/extraction and never touch the store or the bus.

/** `standard` runs on upload; `escalated` on retry_extraction: higher resolution, several
 * page-segmentation modes, broader rules, plus the optional remote provider when configured. */
export type ExtractionTier = 'standard' | 'escalated';

export interface ExtractionInput {
  /** The stored file's bytes (≤ 10 MB, already sniffed to one of the allowed types). */
  readonly bytes: Uint8Array;
  readonly contentType: 'application/pdf' | 'image/jpeg' | 'image/png' | 'image/gif';
  readonly tier: ExtractionTier;
  /** Aborted when the job's time limit passes; adapters stop work and reject with ExtractionFailure. */
  readonly signal?: AbortSignal;
}

export interface ExtractedAddress {
  street: string | null;
  municipality: string | null;
  postal_code: string | null;
  country_alpha2: string | null;
}

export interface ExtractedSupplier {
  name: string | null;
  registration_id: string | null;
  tax_id: string | null;
  vat_id: string | null;
  address: ExtractedAddress;
}

/** Money as decimal strings ("123.45"), rates as decimal strings ("21"), dates ISO (YYYY-MM-DD). */
export interface ExtractedFields {
  supplier: ExtractedSupplier;
  document_number: string | null;
  issue_date: string | null;
  due_date: string | null;
  currency: string | null;
  subtotal: string | null;
  vat_total: string | null;
  total: string | null;
  vat_breakdown: { rate: string; base: string; vat: string }[];
  iban: string | null;
  bic: string | null;
  variable_symbol: string | null;
  line_items: { name: string; quantity: string | null; unit_price: string | null; total: string | null }[];
}

/** Confidence in [0, 1] per extracted field, keyed by the field's dotted path
 * (`total`, `supplier.vat_id`, `supplier.address.postal_code`, `vat_breakdown`, `line_items`). */
export type FieldConfidence = Record<string, number>;

export interface ExtractionResult {
  fields: ExtractedFields;
  confidence: FieldConfidence;
  /** How the text was obtained: `text_layer`, `ocr`, `provider` (for the job record and the bench). */
  method: 'text_layer' | 'ocr' | 'provider';
  pages: number;
}

/** A file that cannot be read (pathological, too many pages, decompression bomb, time limit; its sandbox
 * killed at the memory limit or crashed): the job ends `failed` with this machine-readable reason. */
export class ExtractionFailure extends Error {
  constructor(
    readonly reason: 'unreadable' | 'too_many_pages' | 'too_large' | 'timeout' | 'memory_limit' | 'crashed' | 'provider_error',
    message: string,
  ) {
    super(message);
    this.name = 'ExtractionFailure';
  }
}

export interface Extractor {
  extract(input: ExtractionInput): Promise<ExtractionResult>;
  close?(): Promise<void>;
}
