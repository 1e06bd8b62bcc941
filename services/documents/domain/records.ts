// Rules over a stored document: statuses, what locks its fiscal content, derived amounts, and the
// outbox events that travel with every write of it.
import { recordedUnder } from '../../shared/idempotency';
import { appendWithSnapshot } from '../../shared/outbox/entries';
import { Clock, IdSource } from '../ports/directory';
import { DocType, DocumentRecord, OutboxEntry, EventPayload, PendingNumber } from '../ports/documents-store';
import { Decimal, formatMoney, sum } from '../../shared/money';

export const INITIAL_STATUS: Record<DocType, string> = { invoice: 'draft', credit_note: 'draft', proforma: 'open', quote: 'open' };

/** Types that are numbered when issued, from a gapless per-workspace, per-type, per-year sequence. */
export const ISSUED_TYPES: DocType[] = ['invoice', 'credit_note'];

/**
 * What a binding document prints: frozen once it is issued (invoice, credit note, proforma), converted
 * (proforma) or accepted (quote). Changing any of it then is refused (422 document_locked); sending the
 * same value is fine. The snapshots derived from them (purchaser, bank_account, supplier) are frozen with
 * them. Only `pdf_language` (the language it is rendered in) and `paid_on` (payment state) stay editable.
 */
export const PRINTED_FIELDS = [
  'purchaser_id', 'issue_date', 'delivery_date', 'due_date', 'currency', 'exchange_rate', 'line_items', 'invoice_id', 'variable_symbol',
  'bank_account_id', 'note', 'buyer_reference', 'order_reference', 'contract_reference',
] as const;

export function isLocked(doc: DocumentRecord): boolean {
  switch (doc.type) {
    case 'invoice':
    case 'credit_note':
      return doc.status !== 'draft';
    case 'proforma':
      // A conversion in flight locks it too: the invoice is being written from this content.
      return doc.status !== 'open' || doc.conversion !== null;
    case 'quote':
      return doc.status === 'accepted';
  }
}

export const revisionOf = (doc: DocumentRecord): number => doc.revision ?? 0;

/** A draft that may still receive a number. Monotonic: once false for a document, never true again. */
export function issuable(doc: DocumentRecord): boolean {
  return doc.status === 'draft' && doc.deleted === null && doc.number === null;
}

export function creditedAmount(doc: DocumentRecord): Decimal {
  return sum(doc.credits.filter((c) => c.state === 'applied').map((c) => new Decimal(c.amount)));
}

/**
 * What the purchaser still owes: an invoice's total less applied credit notes (0 once paid); a proforma's
 * total until it is paid or converted; credit notes and quotes are not payment obligations (0).
 */
export function amountDue(doc: DocumentRecord): string {
  switch (doc.type) {
    case 'invoice': {
      if (doc.status === 'paid') return formatMoney(new Decimal(0), doc.currency);
      const due = new Decimal(doc.totals.total).minus(creditedAmount(doc));
      return formatMoney(Decimal.max(due, 0), doc.currency);
    }
    case 'proforma':
      // Paid, or converted (the invoice carries the debt from then on): nothing due on the proforma.
      if (doc.status === 'paid' || doc.status === 'converted') return formatMoney(new Decimal(0), doc.currency);
      return doc.totals.total;
    default:
      return formatMoney(new Decimal(0), doc.currency);
  }
}

/** Room left on an invoice for credit notes, counting reservations still in flight. */
export function creditCapacity(invoice: DocumentRecord, exceptCreditNote: number): Decimal {
  if (invoice.status === 'paid') return new Decimal(0);
  const taken = sum(invoice.credits.filter((c) => c.credit_note_id !== exceptCreditNote).map((c) => new Decimal(c.amount)));
  return new Decimal(invoice.totals.total).minus(taken);
}

export class EventFactory {
  constructor(private readonly ids: IdSource, private readonly clock: Clock) {}

  private entry(doc: DocumentRecord, action: string, payload: EventPayload): Omit<OutboxEntry, 'seq'> {
    return { id: this.ids.eventId(), type: `documents.${doc.type}.${action}`, occurred_at: this.clock.now().toISOString(), payload };
  }

  changed(doc: DocumentRecord, action: string, changedFields: string[] = []): Omit<OutboxEntry, 'seq'> {
    return this.entry(doc, action, {
      document_changed: {
        document_id: doc.id,
        document_type: doc.type,
        status: doc.status,
        number: doc.number ?? '',
        currency: doc.currency,
        total: doc.totals.total,
        amount_due: amountDue(doc),
        changed_fields: changedFields,
      },
    });
  }

  converted(source: DocumentRecord, target: DocumentRecord): Omit<OutboxEntry, 'seq'> {
    return this.entry(source, 'converted', {
      document_converted: { source_id: source.id, source_type: source.type, target_id: target.id, target_type: target.type },
    });
  }

  /** email_delivered / email_failed: the outcome of the invoice's latest send, applied to it. */
  emailOutcome(doc: DocumentRecord, status: 'sent' | 'failed'): Omit<OutboxEntry, 'seq'> {
    return this.changed(doc, status === 'sent' ? 'email_delivered' : 'email_failed', ['email_status', 'email_error']);
  }

  sendRequested(doc: DocumentRecord, mail: { to: string[]; cc: string[]; bcc: string[]; subject: string; message: string; locale: string }, at: string): Omit<OutboxEntry, 'seq'> {
    return this.entry(doc, 'send_requested', {
      invoice_send_requested: { document_id: doc.id, number: doc.number ?? '', ...mail, requested_at: at },
    });
  }
}

/**
 * Appends events to the document's outbox: they are stored by the same write as the change, numbered after
 * the document's previous events (the order they are published in). Each carries the document as this
 * write leaves it: the `data.object` of the tenant's event (docs/events.md).
 */
export function withEvents(doc: DocumentRecord, ...entries: Array<Omit<OutboxEntry, 'seq'>>): DocumentRecord {
  return appendWithSnapshot(doc, entries);
}

/** The issue transition: pure, so whoever completes a reserved number (even another process) writes the same. */
export function applyIssue(doc: DocumentRecord, pending: PendingNumber, at: string, events: EventFactory): DocumentRecord {
  const digits = pending.formatted.replace(/\D/g, '');
  const next: DocumentRecord = {
    ...doc,
    status: 'exposed',
    number: pending.formatted,
    sequence_year: pending.year,
    sequence_number: pending.number,
    supplier: pending.supplier,
    purchaser: pending.purchaser ?? doc.purchaser,
    // The payment reference defaults to the number's digits (as Czech and Slovak banks expect).
    variable_symbol: doc.variable_symbol ?? (doc.type === 'invoice' && digits.length > 0 && digits.length <= 10 ? digits : null),
    issued_at: at,
    updated_at: at,
    revision: revisionOf(doc) + 1,
  };
  return recordedUnder(withEvents(next, events.changed(next, 'issued')), pending.idempotency ?? undefined);
}
