// The mail domain over a real SQLite store, a controllable clock, and fake transports and PDF source.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { deliveriesCollection } from '../../services/rendering/adapters/delivery-store';
import { HandlebarsMailTemplates } from '../../services/rendering/adapters/mail-templates';
import type { SendRequest } from '../../services/rendering/ports/mail';
import { Mailer } from '../../services/rendering/domain/mailer';
import { RetryPolicy } from '../../services/rendering/domain/mail-retry';
import { MailTransport, OutgoingMail, PdfSource } from '../../services/rendering/ports/mail';
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

/** Records what it delivers; fails with the queued errors first. */
export class FakeTransport implements MailTransport {
  delivered: OutgoingMail[] = [];
  failures: Array<Record<string, unknown>> = [];
  /** When set, deliver() waits for it (a test-held latch: an attempt in flight). */
  gate?: Promise<void>;
  entered = 0;
  async deliver(mail: OutgoingMail): Promise<void> {
    this.entered++;
    if (this.gate) await this.gate;
    const failure = this.failures.shift();
    if (failure) throw Object.assign(new Error(String(failure.message ?? 'failed')), failure);
    this.delivered.push(mail);
  }
}

export const fakePdfs: PdfSource = {
  async pdf(_tenant, documentId) {
    return { pdf: Buffer.from(`%PDF-1.7 document ${documentId}`), filename: `Faktura ${documentId}.pdf` };
  },
};

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
    requested_at: '2026-11-23T09:59:59.000Z',
    ...overrides,
  };
}

export function mailWorld(file = path.join(mkdtempSync(path.join(os.tmpdir(), 'mail-unit-')), 'invoicing.db'), clock = new FakeClock()) {
  const store = new SqliteDocumentStore(file);
  const deliveries = deliveriesCollection(store);
  const smtp = new FakeTransport();
  const outbox = new FakeTransport();
  let outcomes = 0;
  const make = (withSmtp = true) =>
    new Mailer({
      deliveries,
      nextId: () => store.nextId('mail_deliveries'),
      transports: { outbox, smtp: withSmtp ? smtp : undefined },
      pdfs: fakePdfs,
      templates: new HandlebarsMailTemplates(),
      from: 'ACME Invoicing <invoices@acme.example>',
      messageIdDomain: 'acme.example',
      retry: RETRY,
      leaseMs: LEASE_MS,
      maxRequestAgeMs: MAX_AGE_MS,
      clock,
      onOutcome: () => outcomes++,
    });
  return { store, deliveries, smtp, outbox, clock, make, file, outcomes: () => outcomes };
}
