// The mail domain over a real SQLite store, a controllable clock, and fake transports and PDF source.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { deliveriesCollection } from '../../services/rendering/adapters/delivery-store';
import { HandlebarsMailTemplates } from '../../services/rendering/adapters/mail-templates';
import type { SendRequest } from '../../services/rendering/ports/mail';
import { DEFAULT_DISPATCH, DispatchLimits, Mailer, MailerHooks } from '../../services/rendering/domain/mailer';
import { MailLanes, mailLanesSpec } from '../../services/rendering/domain/mail-lanes';
import type { Tenant } from '../../services/shared/tenant';
import { RetryPolicy } from '../../services/rendering/domain/mail-retry';
import { DeliverOptions, MailTransport, OutgoingMail, PdfDocument, PdfSource, PinnedPdf } from '../../services/rendering/ports/mail';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';

export const RETRY: RetryPolicy = { baseMs: 1_000, maxMs: 8_000, maxAttempts: 5 };
export const LEASE_MS = 60_000;
export const MAX_AGE_MS = 24 * 3600_000;

export class FakeClock {
  t = Date.parse('2026-11-23T10:00:00.000Z');
  now = () => new Date(this.t);
  advance(ms: number) {
    this.t += ms;
  }
}

/** Real time, moved forward by `advance` (a real transport's deadlines are in real time). */
export class ShiftedClock extends FakeClock {
  private shift = 0;
  now = () => new Date(Date.now() + this.shift);
  advance(ms: number) {
    this.shift += ms;
  }
}

/** Records what it delivers; fails with the queued errors first. */
export class FakeTransport implements MailTransport {
  delivered: OutgoingMail[] = [];
  failures: Array<Record<string, unknown>> = [];
  /** When set, deliver() waits for it (a test-held latch: an attempt in flight). */
  gate?: Promise<void>;
  entered = 0;
  deliveries = () => this.delivered;
  /** The deadline each attempt was given. */
  deadlines: Array<Date | undefined> = [];
  /** Attempts in flight now, and the most there ever were at once. */
  inFlight = 0;
  maxInFlight = 0;
  async deliver(mail: OutgoingMail, options: DeliverOptions = {}): Promise<void> {
    this.entered++;
    this.deadlines.push(options.deadline);
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      if (this.gate) await this.gate;
      // Let every other attempt that can start, start (concurrency shows in maxInFlight).
      await new Promise((resolve) => setImmediate(resolve));
      const failure = this.failures.shift();
      if (failure) throw Object.assign(new Error(String(failure.message ?? 'failed')), failure);
      this.delivered.push(mail);
    } finally {
      this.inFlight--;
    }
  }
}

/** The document version request() sends for (its requested_at: the send wrote both). */
export const SENT_AT = '2026-11-23T09:59:59.000Z';

/**
 * PDFs by document version: `updatedAt` is each document's current version (unset: SENT_AT); pin
 * stores the current version's file under a key of its own, read gives back a stored file.
 */
export class FakePdfs implements PdfSource {
  updatedAt = new Map<number, string>();
  stored = new Map<string, Buffer>();
  /** Thrown by the next pins (a renderer not available yet). */
  failures: Error[] = [];
  pins = 0;
  async pin(_tenant: Tenant, documentId: number): Promise<PinnedPdf> {
    this.pins++;
    const failure = this.failures.shift();
    if (failure) throw failure;
    const version = this.updatedAt.get(documentId) ?? SENT_AT;
    const key = `pdfs/7/live/${documentId}-${version}.pdf`;
    if (!this.stored.has(key)) this.stored.set(key, Buffer.from(`%PDF-1.7 document ${documentId} as of ${version}`));
    return { etag: `"${documentId}-${version}"`, key, filename: `Faktura ${documentId}.pdf`, document_updated_at: version };
  }
  async read(pinned: PinnedPdf): Promise<PdfDocument> {
    const pdf = this.stored.get(pinned.key);
    if (!pdf) throw Object.assign(new Error(`${pinned.key} is no longer stored`), { code: 'EMESSAGE' });
    return { pdf, filename: pinned.filename };
  }
  /** A PDF for composing a message directly. */
  async pdf(_tenant: Tenant, documentId: number): Promise<PdfDocument> {
    return { pdf: Buffer.from(`%PDF-1.7 document ${documentId}`), filename: `Faktura ${documentId}.pdf` };
  }
}

export const fakePdfs = new FakePdfs();

export function request(overrides: Partial<SendRequest> = {}): SendRequest {
  return {
    id: randomUUID(),
    account_id: 7,
    livemode: true,
    document_id: 42,
    number: '2026000001',
    to: ['ap@customer.example'],
    cc: ['cc@customer.example'],
    bcc: ['archive@acme.example'],
    subject: 'Faktura 2026000001',
    message: 'Dobrý den,\n\nv příloze zasíláme fakturu 2026000001.',
    locale: 'cs',
    requested_at: SENT_AT,
    ...overrides,
  };
}

export function mailWorld(file = path.join(mkdtempSync(path.join(os.tmpdir(), 'mail-unit-')), 'invoicing.db'), clock = new FakeClock()) {
  const store = new SqliteDocumentStore(file);
  const deliveries = deliveriesCollection(store);
  const smtp = new FakeTransport();
  const outbox = new FakeTransport();
  const pdfs = new FakePdfs();
  let outcomes = 0;
  const lanes = new MailLanes(store.collection(mailLanesSpec), () => store.nextId('mail_lanes'));
  const make = (withSmtp = true, options: { dispatch?: DispatchLimits; hooks?: MailerHooks; smtp?: MailTransport; attemptTimeoutMs?: number } = {}) =>
    new Mailer({
      deliveries,
      lanes,
      nextId: () => store.nextId('mail_deliveries'),
      transports: { outbox, smtp: withSmtp ? (options.smtp ?? smtp) : undefined },
      pdfs,
      templates: new HandlebarsMailTemplates(),
      from: 'ACME Invoicing <invoices@acme.example>',
      messageIdDomain: 'acme.example',
      retry: RETRY,
      leaseMs: LEASE_MS,
      attemptTimeoutMs: options.attemptTimeoutMs ?? LEASE_MS / 2,
      maxRequestAgeMs: MAX_AGE_MS,
      dispatch: options.dispatch ?? DEFAULT_DISPATCH,
      clock,
      onOutcome: () => outcomes++,
      hooks: options.hooks,
    });
  return { store, deliveries, lanes, smtp, outbox, pdfs, clock, make, file, outcomes: () => outcomes };
}
