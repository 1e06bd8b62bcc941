// What the documents domain persists, as typed collections of the shared document-store port.
// Invoices, credit notes, proformas and quotes share one collection and one id space.
import type { AddressData } from '../../shared/address';
import type { ActionsUnderKeys, CreatedUnderKey, IdempotencyToken } from '../../shared/idempotency';
import type { OutboxEntry as SharedOutboxEntry, OutboxFields } from '../../shared/outbox/entries';
import { Collection, StoredDoc } from '../../shared/store/port';
import type { Totals, VatRateTotal } from '../../shared/totals';

export type { Totals, VatRateTotal };

export type { AddressData };

export interface LineItemData {
  name: string;
  description: string;
  /** Normalised decimal strings (see formatPlain / formatUnitPrice). */
  quantity: string;
  unit: string;
  unit_price: string;
  vat_rate: string;
  discount: string;
  net_amount: string;
}


export type EmailStatus = 'queued' | 'sent' | 'failed';

export type DocType = 'invoice' | 'credit_note' | 'proforma' | 'quote';
export const DOC_TYPES: DocType[] = ['invoice', 'credit_note', 'proforma', 'quote'];


/** A supplier or purchaser as it was when the snapshot was taken. */
export interface PartyData {
  /** Legal-entity id of a purchaser; 0 for the supplier (the workspace). */
  id: number;
  name: string;
  registration_id: string;
  tax_id: string;
  vat_id: string;
  email: string;
  phone: string;
  address: AddressData | null;
  postal_address: AddressData | null;
}

export interface BankDetailsData {
  id: number;
  name: string;
  iban: string;
  account_number: string;
  swift: string;
  bank_code: string;
}

/** An event waiting in a document's outbox; the relay publishes it, then removes it by id. */
export type OutboxEntry = SharedOutboxEntry<EventPayload>;

export interface DocumentChangedPayload {
  document_id: number;
  document_type: DocType;
  status: string;
  number: string;
  currency: string;
  total: string;
  amount_due: string;
  changed_fields: string[];
}

export interface InvoiceSendRequestedPayload {
  document_id: number;
  number: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  message: string;
  locale: string;
  requested_at: string;
}

export interface DocumentConvertedPayload {
  source_id: number;
  source_type: DocType;
  target_id: number;
  target_type: DocType;
}

export type EventPayload =
  | { document_changed: DocumentChangedPayload }
  | { invoice_send_requested: InvoiceSendRequestedPayload }
  | { document_converted: DocumentConvertedPayload };

/** A credit note's claim on its source invoice: reserved before the note is numbered, applied after. */
export interface CreditAllocation {
  credit_note_id: number;
  amount: string;
  state: 'reserved' | 'applied';
}

/**
 * Its outbox fields (`outbox`, `outbox_pending`, `outbox_seq`, …) are the shared outbox's (shared/outbox/entries.ts).
 * Keeps the Idempotency-Key it was created under and those of its recent actions (a retry answers it).
 */
export interface DocumentRecord extends StoredDoc, OutboxFields<EventPayload>, CreatedUnderKey, ActionsUnderKeys {
  /**
   * Content revision: bumped by every write of the document except the outbox relay's bookkeeping
   * (which bumps `version` only). Monotonic, so "still at revision r" once false is false for ever:
   * a number reserved for revision r is written only on revision r (see domain/numbering.ts).
   * Absent on records written before it existed (read as 0).
   */
  revision?: number;
  account_id: number;
  livemode: boolean;
  type: DocType;
  status: string;
  number: string | null;
  /** Year and counter of the number in the per-type sequence (invoices, credit notes). */
  sequence_year: number | null;
  sequence_number: number | null;
  purchaser_id: number | null;
  purchaser: PartyData | null;
  supplier: PartyData;
  issue_date: string;
  due_date: string | null;
  delivery_date: string | null;
  currency: string;
  exchange_rate: string;
  pdf_language: string;
  variable_symbol: string | null;
  bank_account_id: number | null;
  bank_account: BankDetailsData | null;
  note: string | null;
  /**
   * Invoices: the buyer's references (EN 16931 BT-10, BT-13, BT-12), printed on the e-invoice. Absent on
   * records written before they existed, which reads as null.
   */
  buyer_reference?: string | null;
  /**
   * The workspace currency `exchange_rate` converts to, when it is not `currency` (else null): the VAT
   * accounting currency of the e-invoice (BT-6). Frozen once the document is locked; absent on records
   * written before it was kept (read as null: the e-invoice then carries no BT-6).
   */
  accounting_currency?: string | null;
  order_reference?: string | null;
  contract_reference?: string | null;
  line_items: LineItemData[];
  totals: Totals;
  paid_on: string | null;
  email_sent_at: string | null;
  /**
   * Invoices: what became of the last send (domain/email-status.ts). Absent on records written before
   * deliveries were tracked, which reads as null.
   */
  email_status?: EmailStatus | null;
  email_error?: string | null;
  /** The send_requested event id of the last send: only its outcome may change email_status. */
  email_delivery_id?: string | null;
  accepted_at: string | null;
  issued_at: string | null;
  /** Credit notes: the source invoice. */
  invoice_id: number | null;
  /** The proforma / quote a document was created from. */
  proforma_id: number | null;
  quote_id: number | null;
  /** Invoices: credit notes netted against it. */
  credits: CreditAllocation[];
  /** Proformas: the invoice reserved by convert_to_invoice (set before the invoice is written). */
  conversion: { invoice_id: number } | null;
  created_at: string;
  updated_at: string;
  deleted: string | null;
}

/** A number handed out by a sequence but not yet written on its document (see domain/numbering.ts). */
export interface PendingNumber {
  document_id: number;
  year: number;
  number: number;
  /** The number format `formatted` was printed in: a compaction renumbers in it (domain/numbering.ts). */
  format?: string;
  formatted: string;
  /**
   * The document's revision whose checks the issuer passed (lines, year, credit reservation): the
   * number is written only on that revision, else given back. Absent on numbers reserved before it existed.
   */
  revision?: number;
  /** When it was reserved (RFC 3339): after a grace period anyone settles it for a silent owner. */
  reserved_at: string;
  /** Snapshots taken by the issuer, applied with the number so a roll-forward needs no remote call. */
  supplier: PartyData;
  purchaser: PartyData | null;
  /** The issue request's Idempotency-Key, recorded on the document with the number (whoever applies it). */
  idempotency?: IdempotencyToken | null;
}

export interface SequenceRecord extends StoredDoc {
  account_id: number;
  livemode: boolean;
  type: DocType;
  year: number;
  last: number;
  /**
   * Numbers handed out but not all written yet: last−k+1 … last for one batch, in order (a record
   * written before batches may hold a single one). Read it with pendingOf (domain/numbering.ts).
   */
  pending: PendingNumber[] | PendingNumber | null;
  updated_at: string;
}

/** Per-workspace settings; the record id is the account id. */
export interface SettingsRecord extends StoredDoc {
  number_format: string;
  currency: string;
  locale: string;
  updated_at: string;
}

/** Prefix of the unique key on a document's number text (per workspace, mode, type): a taken text is refused. */
export const NUMBER_TEXT_KEY = 'number_text:';

/** Recipients a workspace (one mode) mailed on one UTC day (domain/mail-allowance.ts). */
export interface MailAllowanceCounter extends StoredDoc {
  key: string;
  account_id: number;
  livemode: boolean;
  /** YYYY-MM-DD (UTC). */
  day: string;
  /** Recipients taken this day. */
  used: number;
}

export interface DocumentsStore {
  documents: Collection<DocumentRecord>;
  sequences: Collection<SequenceRecord>;
  settings: Collection<SettingsRecord>;
  /** Recipients mailed per workspace and day (domain/mail-allowance.ts). */
  mailAllowance: Collection<MailAllowanceCounter>;
  /** The shared id space of documents, and the (gappy) counters of proforma and quote numbers. */
  nextId(sequence: string): Promise<number>;
}
