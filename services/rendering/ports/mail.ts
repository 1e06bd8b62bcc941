// What the mail half of the rendering service needs from the outside: where deliveries are kept, how a
// message leaves (SMTP or the local .eml outbox), where the PDF comes from, and the localised templates
// that fill in a subject or body the send request left empty.
import type { Tenant } from '../../shared/tenant';
import type { OutboxEntry, OutboxFields } from '../../shared/outbox/entries';
import { Collection, StoredDoc } from '../../shared/store/port';
import type { WorkLane } from '../../shared/work-lanes';

export type DeliveryStatus = 'queued' | 'sent' | 'failed';
/** smtp: to the real recipients (SMTP_URL); outbox: an .eml file under DATA_DIR/outbox, nobody receives it. */
export type DeliveryRoute = 'smtp' | 'outbox';

/** A documents.invoice.send_requested event, as the mail half reads it (defaults already applied). */
export interface SendRequest {
  /** The send_requested event id. */
  id: string;
  account_id: number;
  livemode: boolean;
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

/**
 * One e-mail of one send request (documents.invoice.send_requested), keyed by the event id. Its outbox
 * (shared/outbox) carries the outcome event to the documents service, written with the outcome itself.
 */
export interface DeliveryRecord extends StoredDoc, OutboxFields<DeliveryOutboxPayload>, Omit<SendRequest, 'id'> {
  /** The send_requested event id: unique, so a redelivered event never makes a second delivery. */
  delivery_id: string;
  route: DeliveryRoute;
  /** `<send-{delivery_id}@{domain}>`: the same on every attempt, so a retried message is recognisably one. */
  message_id: string;
  status: DeliveryStatus;
  /** Attempts started so far (each claims the record first). */
  attempts: number;
  /** When a queued delivery is next due (RFC 3339). */
  next_attempt_at: string;
  /** An attempt in flight holds the record until then; after a crash anyone may take it again. */
  lease_until: string | null;
  /** Why the last attempt did not succeed (temporary) or why the delivery failed (permanent). */
  last_error: string | null;
  queued_at: string;
  sent_at: string | null;
  failed_at: string | null;
  /**
   * Dispatch order of a queued delivery: when it may next be attempted (next_attempt_at, or the end of
   * the lease of an attempt in flight), as a number that sorts descending (the store's list order) —
   * see domain/mail-delivery.ts dueRank. null once it is sent or failed.
   */
  due_rank?: number | null;
  /** The PDF of the version sent for, pinned when the request was accepted; every attempt attaches it. */
  pdf?: PinnedPdf | null;
}

/** The PDF a delivery attaches: the version current when `send` was accepted, stored by its ETag. */
export interface PinnedPdf {
  /** The rendering service's ETag of that version (docs/rendering.md, "ETag = hash of the render input"). */
  etag: string;
  /** Its blob key (pdfs/<account>/<live|test>/<etag hex>.pdf): the very stored file a download served. */
  key: string;
  filename: string;
  /** The document's updated_at in that version (equals the send request's requested_at). */
  document_updated_at: string;
}

/**
 * A workspace (tenant) that has queued deliveries: dispatch takes work per lane in turn, so finding the
 * lanes must not depend on reading any one workspace's backlog (services/shared/work-lanes.ts).
 */
export type MailLane = WorkLane;

export interface EmailDeliveryChangedPayload {
  delivery_id: string;
  document_id: number;
  status: 'sent' | 'failed';
  error: string;
  at: string;
}

/** The outcome event (mail.delivery.sent|failed) in a delivery's outbox (services/shared/outbox). */
export type DeliveryOutboxEntry = OutboxEntry<DeliveryOutboxPayload>;
export type DeliveryOutboxPayload = { email_delivery_changed: EmailDeliveryChangedPayload };

export interface MailAttachment {
  filename: string;
  content: Buffer;
  contentType: string;
}

export interface OutgoingMail {
  messageId: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  text: string;
  html: string;
  attachments: MailAttachment[];
  /** Where the message goes: an outbox file name is derived from this, SMTP ignores it. */
  deliveryId: string;
}

/** Why an attempt failed, as the domain sees it (see domain/mail-retry.ts classifyFailure). */
export interface TransportFailure {
  /** SMTP reply code when the server answered (e.g. 451, 550). */
  responseCode?: number;
  /** Node/nodemailer error code (ECONNREFUSED, ETIMEDOUT, EENVELOPE, …). */
  code?: string;
  message: string;
}

export interface DeliverOptions {
  /** The attempt must be over by then (its lease outlasts it): the transport abandons the connection. */
  deadline?: Date;
}

export interface MailTransport {
  /** Delivers or throws a TransportFailure-shaped error. */
  deliver(mail: OutgoingMail, options?: DeliverOptions): Promise<void>;
}

export interface PdfDocument {
  pdf: Buffer;
  filename: string;
}

/**
 * The PDF of an invoice for a delivery: pinned once (the version current now, stored), then read back
 * by its key on every attempt, whatever the document became since.
 */
export interface PdfSource {
  /** The current version, stored; `document_updated_at` says which version of the document it prints. */
  pin(tenant: Tenant, documentId: number): Promise<PinnedPdf>;
  /** The pinned file; throws an EMESSAGE-coded error (permanent) when it is no longer stored. */
  read(pinned: PinnedPdf): Promise<PdfDocument>;
}

export interface MailTemplateVars {
  number: string;
  message: string;
  locale: string;
}

/** Localised handlebars templates (en, cs, sk, de): default subject/body and the HTML around the body. */
export interface MailTemplates {
  subject(vars: MailTemplateVars): string;
  text(vars: MailTemplateVars): string;
  html(vars: MailTemplateVars): string;
}

export type DeliveryCollection = Collection<DeliveryRecord>;
