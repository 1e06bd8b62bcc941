// What a PDF prints, read from the services that own it: the document (documents service) and the
// workspace's legal identity and logo (identity service, blob store).
import { Tenant } from '../../shared/tenant';

export type DocKind = 'invoice' | 'credit_note' | 'proforma' | 'quote';

export interface PrintedAddress {
  name: string;
  street: string;
  municipality: string;
  postal_code: string;
  /** Two-letter lowercase ISO 3166-1 code. */
  country_alpha2: string;
}

export interface PrintedParty {
  name: string;
  registration_id: string;
  tax_id: string;
  vat_id: string;
  email: string;
  phone: string;
  address: PrintedAddress | null;
}

export interface PrintedLine {
  name: string;
  description: string;
  quantity: string;
  unit: string;
  unit_price: string;
  vat_rate: string;
  discount: string;
  net_amount: string;
}

export interface PrintedBank {
  name: string;
  iban: string;
  account_number: string;
  bank_code: string;
  swift: string;
}

/** A document as the documents service returns it (decimal strings, ISO dates). */
export interface PrintableDocument {
  id: number;
  type: DocKind;
  number: string | null;
  status: string;
  supplier: PrintedParty;
  purchaser: PrintedParty | null;
  issue_date: string;
  due_date: string | null;
  delivery_date: string | null;
  currency: string;
  /** Units of accounting_currency per unit of currency. */
  exchange_rate?: string;
  /** The VAT accounting currency when it is not `currency` (e-invoice BT-6), else null. */
  accounting_currency?: string | null;
  pdf_language: string;
  variable_symbol: string | null;
  bank_account: PrintedBank | null;
  note: string | null;
  line_items: PrintedLine[];
  subtotal: string;
  vat_breakdown: Array<{ vat_rate: string; base: string; vat: string }>;
  vat_total: string;
  total: string;
  credited_amount: string;
  amount_due: string;
  paid_on: string | null;
  /** Credit notes: the number of the invoice they correct. */
  invoice_number: string | null;
  /** Invoices: the buyer's references (e-invoice BT-10, BT-13, BT-12; not printed on the PDF). */
  buyer_reference?: string | null;
  order_reference?: string | null;
  contract_reference?: string | null;
  updated_at: string;
}

export interface Workspace {
  /** The workspace's current legal identity (a draft prints it; an issued document its snapshot). */
  identity: PrintedParty;
  /** Content-addressed: a new logo is a new key. */
  logo_key: string | null;
}

export interface Logo {
  data: Buffer;
  contentType: string;
}

export interface DocumentSource {
  /** NOT_FOUND when the document is absent, deleted or of another type. */
  document(tenant: Tenant, kind: DocKind, id: number): Promise<PrintableDocument>;
  workspace(accountId: number): Promise<Workspace>;
  /** null when the blob is gone. */
  logo(key: string): Promise<Logo | null>;
  /**
   * A token that differs after every acknowledged write of the document or of its workspace, read
   * without asking their services (their change counters); read it *before* the document and the
   * workspace, and what they return may be kept under it. Absent or null: nothing is kept.
   */
  revision?(tenant: Tenant, kind: DocKind, id: number): Promise<string | null>;
}
