// The life of one delivery, as pure transitions over its record:
//   accepted → queued ─claim→ (attempt) ─┬ success            → sent
//                  ▲                     ├ temporary failure  → queued, next_attempt_at = now + backoff
//                  └─────────────────────┘ permanent failure or attempts exhausted → failed
// Every transition is written with compare-and-set, so two dispatchers never attempt the same delivery
// at once; a claim carries a lease, so an attempt cut short by a crash is taken up again after it ends.
import type { Tenant } from '../../shared/tenant';
import { appendToOutbox } from '../../shared/outbox/entries';
import type { DeliveryRecord, DeliveryRoute, PinnedPdf, SendRequest, TransportFailure } from '../ports/mail';
import { backoffMs, classifyFailure, describeFailure, RetryPolicy } from './mail-retry';

/**
 * The Message-ID of a send request: derived from the event id alone, so every attempt and every
 * redelivery of the same request carries the same one (and a receiving MTA can drop a duplicate).
 */
export function messageIdFor(deliveryId: string, domain: string): string {
  const local = deliveryId.toLowerCase().replace(/[^a-z0-9.-]/g, '-');
  return `<send-${local}@${domain}>`;
}

/**
 * The dispatch order of a queued delivery, as a number the store's (descending) list order sorts
 * earliest-first: deliveries are read by when they may next be attempted, so any number of them
 * waiting out a backoff (or held by a lease) never hides one that is due.
 */
const RANK_BASE = 8_000_000_000_000_000;
export function dueRank(at: string): number {
  return RANK_BASE - Date.parse(at);
}

/**
 * Test-mode documents (sandbox, test tokens) never reach a real recipient: they go to the local outbox
 * even when SMTP is configured. Live documents go over SMTP when it is configured, else to the outbox.
 */
export function routeFor(tenant: Pick<Tenant, 'livemode'>, smtpConfigured: boolean): DeliveryRoute {
  return tenant.livemode && smtpConfigured ? 'smtp' : 'outbox';
}

export function newDelivery(request: SendRequest, options: { now: Date; route: DeliveryRoute; messageIdDomain: string }): Omit<DeliveryRecord, 'id' | 'version'> {
  const at = options.now.toISOString();
  return {
    delivery_id: request.id,
    account_id: request.account_id,
    livemode: request.livemode,
    document_id: request.document_id,
    number: request.number,
    to: request.to,
    cc: request.cc,
    bcc: request.bcc,
    subject: request.subject,
    message: request.message,
    locale: request.locale,
    requested_at: request.requested_at,
    route: options.route,
    message_id: messageIdFor(request.id, options.messageIdDomain),
    status: 'queued',
    attempts: 0,
    next_attempt_at: at,
    lease_until: null,
    last_error: null,
    queued_at: at,
    sent_at: null,
    failed_at: null,
    due_rank: dueRank(at),
    pdf: null,
    outbox: [],
    outbox_pending: null,
  };
}

/** Queued, due, and not held by an attempt in flight. */
export function isDue(record: DeliveryRecord, now: Date): boolean {
  if (record.status !== 'queued') return false;
  if (Date.parse(record.next_attempt_at) > now.getTime()) return false;
  return record.lease_until === null || Date.parse(record.lease_until) <= now.getTime();
}

/** Takes a due delivery for one attempt; null when it is not due (someone else has it, or it is done). */
export function claim(record: DeliveryRecord, now: Date, leaseMs: number): DeliveryRecord | null {
  if (!isDue(record, now)) return null;
  const leaseUntil = new Date(now.getTime() + leaseMs).toISOString();
  // Held until the lease ends: it sorts there (after everything due), and is due again then if the attempt died.
  return { ...record, attempts: record.attempts + 1, lease_until: leaseUntil, due_rank: dueRank(leaseUntil) };
}

/**
 * Pins the PDF a delivery attaches: the version of the invoice that was current when its send was
 * accepted — the one whose updated_at is the request's requested_at (the send wrote both). A document
 * that changed before the version could be pinned (marked paid, edited, sent again within the moment
 * the request travels) no longer has that version: the delivery fails, visibly, rather than mail a
 * version nobody sent.
 */
export function withPinnedPdf(record: DeliveryRecord, pdf: PinnedPdf, now: Date): DeliveryRecord {
  if (Date.parse(pdf.document_updated_at) === Date.parse(record.requested_at)) return { ...record, pdf };
  const at = now.toISOString();
  const reason = `the invoice changed after this send was requested (${record.requested_at}; now ${pdf.document_updated_at}) and before its PDF was attached; send again`;
  return withOutcomeEvent({ ...record, status: 'failed', failed_at: at, lease_until: null, due_rank: null, last_error: reason }, 'failed', at);
}

/**
 * The outcome travels to the documents service as an event stored on the record by the same write
 * (outbox): it exists iff the outcome was recorded. Its id is derived, so a repeated write is one event.
 */
function withOutcomeEvent(record: DeliveryRecord, status: 'sent' | 'failed', at: string): DeliveryRecord {
  const id = `mail-${record.delivery_id}-${status}`;
  if ((record.outbox ?? []).some((e) => e.id === id)) return record;
  return appendToOutbox(record, [
    {
      id,
      type: `mail.delivery.${status}`,
      occurred_at: at,
      payload: { email_delivery_changed: { delivery_id: record.delivery_id, document_id: record.document_id, status, error: record.last_error ?? '', at } },
    },
  ]);
}

export function succeeded(record: DeliveryRecord, now: Date): DeliveryRecord {
  const at = now.toISOString();
  return withOutcomeEvent({ ...record, status: 'sent', sent_at: at, lease_until: null, due_rank: null, last_error: null }, 'sent', at);
}

/** A failed attempt: back to the queue with a later due time, or failed for good. */
export function attemptFailed(record: DeliveryRecord, failure: TransportFailure, now: Date, policy: RetryPolicy): DeliveryRecord {
  const error = describeFailure(failure);
  const permanent = classifyFailure(failure) === 'permanent';
  if (permanent || record.attempts >= policy.maxAttempts) {
    const reason = permanent ? error : `gave up after ${record.attempts} attempts: ${error}`;
    const at = now.toISOString();
    return withOutcomeEvent({ ...record, status: 'failed', failed_at: at, lease_until: null, due_rank: null, last_error: reason }, 'failed', at);
  }
  const next = new Date(now.getTime() + backoffMs(record.attempts, policy)).toISOString();
  return { ...record, status: 'queued', next_attempt_at: next, lease_until: null, due_rank: dueRank(next), last_error: error };
}

/**
 * A request that reaches the mail service long after it was made (history replayed by a first start, an
 * outage of more than `maxAgeMs`) is not delivered late: it fails, visibly, and the user may send again.
 */
export function expiredRequest(record: DeliveryRecord, now: Date, maxAgeMs: number): DeliveryRecord | null {
  const age = now.getTime() - Date.parse(record.requested_at);
  if (!(age > maxAgeMs)) return null;
  const at = now.toISOString();
  const reason = `send request expired: made ${record.requested_at}, more than ${Math.round(maxAgeMs / 60_000)} min before it could be delivered; send again`;
  return withOutcomeEvent({ ...record, status: 'failed', failed_at: at, due_rank: null, last_error: reason }, 'failed', at);
}
