// email_status / email_error of an invoice: `queued` when a send is accepted (the request is in the
// outbox), then `sent` or `failed` when the mail service reports the outcome of that very request
// (event mail.delivery.sent|failed on invoicing.mail.v1, keyed by the send_requested event id).
// Outcomes of an earlier send, and repeated outcomes, change nothing; the status never leaves sent or
// failed except through a new send.
import { DocumentRecord } from '../ports/documents-store';

export interface DeliveryOutcome {
  delivery_id: string;
  status: 'sent' | 'failed';
  error: string;
}

export function queueEmail(doc: DocumentRecord, deliveryId: string): DocumentRecord {
  return { ...doc, email_status: 'queued', email_error: null, email_delivery_id: deliveryId };
}

/**
 * The document with the outcome applied, or null when it does not apply (another send is the latest,
 * or this one is already settled). updated_at is left alone: the delivery changes nothing printed,
 * so the PDF and its ETag stay as they are.
 */
export function applyDeliveryOutcome(doc: DocumentRecord, outcome: DeliveryOutcome): DocumentRecord | null {
  if (doc.type !== 'invoice' || !doc.email_delivery_id || doc.email_delivery_id !== outcome.delivery_id) return null;
  if (doc.email_status !== 'queued') return null;
  return {
    ...doc,
    email_status: outcome.status,
    email_error: outcome.status === 'failed' ? outcome.error || 'delivery failed' : null,
  };
}
