// The mail service's rules: one delivery per send request, a stable Message-ID, test mode never reaching
// real recipients, and the retry/backoff state machine (temporary vs permanent SMTP failures).
import { simpleParser } from 'mailparser';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DeliveryStatus } from '../../gen/invoicing/rendering/v1/rendering';
import { EmlOutbox } from '../../services/rendering/adapters/eml-outbox';
import { toDelivery } from '../../services/rendering/grpc/mail-handlers';
import { CursorCodec } from '../../services/shared/pagination';
import { HandlebarsMailTemplates } from '../../services/rendering/adapters/mail-templates';
import { composeMail } from '../../services/rendering/domain/mail-compose';
import { attemptFailed, claim, messageIdFor, newDelivery, routeFor, succeeded } from '../../services/rendering/domain/mail-delivery';
import { backoffMs, classifyFailure } from '../../services/rendering/domain/mail-retry';
import { DeliveryRecord } from '../../services/rendering/ports/mail';
import { fakePdfs, LEASE_MS, mailWorld, MAX_AGE_MS, request, RETRY } from './mail.fixtures';

const NOW = new Date('2026-11-23T10:00:00.000Z');
const record = (overrides: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  ...newDelivery(request(), { now: NOW, route: 'smtp', messageIdDomain: 'acme.example' }),
  id: 1,
  version: 1,
  ...overrides,
});

describe('Message-ID of a delivery', () => {
  it('is derived from the send request (event id) alone: the same for every attempt and redelivery', () => {
    const id = '3f1c2a9e-0b7d-4c41-9d2e-5a8f6b7c1d20';
    expect(messageIdFor(id, 'acme.example')).toBe(`<send-${id}@acme.example>`);
    expect(messageIdFor(id, 'acme.example')).toBe(messageIdFor(id, 'acme.example'));
    expect(messageIdFor('another-request', 'acme.example')).not.toBe(messageIdFor(id, 'acme.example'));
  });

  it('is carried by every attempt of the delivery', async () => {
    const w = mailWorld();
    const mailer = w.make();
    const req = request();
    w.smtp.failures.push({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
    await mailer.accept(req);
    await mailer.dispatchDue();
    w.clock.advance(RETRY.baseMs);
    await mailer.dispatchDue();
    expect(w.smtp.entered).toBe(2);
    expect(w.smtp.delivered.map((m) => m.messageId)).toEqual([`<send-${req.id}@acme.example>`]);
  });
});

describe('one delivery per send request', () => {
  it('a redelivered event is accepted once and sent once', async () => {
    const w = mailWorld();
    const mailer = w.make();
    const req = request();
    const first = await mailer.accept(req);
    const again = await mailer.accept({ ...req });
    expect(again.id).toBe(first.id);
    await mailer.dispatchDue();
    await mailer.accept({ ...req });
    await mailer.dispatchDue();
    expect(w.smtp.delivered).toHaveLength(1);
    expect(await w.deliveries.count({ delivery_id: req.id })).toBe(1);
  });

  it('two replicas racing on one due delivery: only the one that claims it attempts it', async () => {
    const w = mailWorld();
    const a = w.make();
    const b = w.make();
    await a.accept(request());
    let release!: () => void;
    w.smtp.gate = new Promise<void>((resolve) => (release = resolve));
    const inFlight = a.dispatchDue();
    while (w.smtp.entered === 0) await new Promise((resolve) => setImmediate(resolve));
    // Replica b looks while a's attempt is in flight: the delivery is claimed (leased), so b leaves it.
    expect(await b.dispatchDue()).toBe(0);
    release();
    expect(await inFlight).toBe(1);
    expect(w.smtp.entered).toBe(1);
    expect(w.smtp.delivered).toHaveLength(1);
  });

  it('an attempt cut short by a crash is taken up again once its lease ends (durable queue)', async () => {
    const w = mailWorld();
    const mailer = w.make();
    const accepted = await mailer.accept(request());
    // The crashed process claimed it and never wrote an outcome.
    const claimed = claim(accepted, w.clock.now(), LEASE_MS)!;
    await w.deliveries.update(claimed);
    const restarted = w.make();
    expect(await restarted.dispatchDue()).toBe(0);
    w.clock.advance(LEASE_MS);
    expect(await restarted.dispatchDue()).toBe(1);
    const after = await w.deliveries.findOne({ delivery_id: accepted.delivery_id });
    expect(after).toMatchObject({ status: 'sent', attempts: 2 });
  });
});

describe('late requests', () => {
  it('a request older than the maximum age when it arrives fails visibly instead of being delivered late', async () => {
    const w = mailWorld();
    const mailer = w.make();
    const stale = await mailer.accept(request({ requested_at: new Date(w.clock.t - MAX_AGE_MS - 1).toISOString() }));
    expect(stale).toMatchObject({ status: 'failed', outbox_pending: true });
    expect(stale.last_error).toMatch(/^send request expired/);
    const freshAt = new Date(w.clock.t - MAX_AGE_MS).toISOString();
    w.pdfs.updatedAt.set(42, freshAt); // the version that send wrote
    const fresh = await mailer.accept(request({ requested_at: freshAt }));
    expect(fresh.status).toBe('queued');
    await mailer.dispatchDue();
    expect(w.smtp.delivered.map((m) => m.deliveryId)).toEqual([fresh.delivery_id]);
  });
});

describe('test-mode routing', () => {
  it('test-mode (sandbox) requests go to the local outbox even when SMTP is configured; live ones over SMTP', async () => {
    expect(routeFor({ livemode: false }, true)).toBe('outbox');
    expect(routeFor({ livemode: true }, true)).toBe('smtp');
    expect(routeFor({ livemode: true }, false)).toBe('outbox');
    const w = mailWorld();
    const mailer = w.make(true);
    await mailer.accept(request({ livemode: false, to: ['real.person@customer.example'] }));
    await mailer.accept(request({ livemode: true }));
    await mailer.dispatchDue();
    expect(w.outbox.delivered.map((m) => m.to)).toEqual([['real.person@customer.example']]);
    expect(w.smtp.delivered).toHaveLength(1);
    expect(w.smtp.delivered[0].to).toEqual(['ap@customer.example']);
  });

  it('without SMTP_URL every delivery is written to the outbox', async () => {
    const w = mailWorld();
    const mailer = w.make(false);
    await mailer.accept(request());
    await mailer.dispatchDue();
    expect(w.outbox.delivered).toHaveLength(1);
    expect((await w.deliveries.findOne({}))!.route).toBe('outbox');
  });
});

describe('retry and backoff', () => {
  it('4xx replies and unreachable servers are temporary; 5xx replies are permanent', () => {
    expect(classifyFailure({ responseCode: 421, message: '421 try later' })).toBe('temporary');
    expect(classifyFailure({ responseCode: 451, message: '451 greylisted' })).toBe('temporary');
    expect(classifyFailure({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' })).toBe('temporary');
    expect(classifyFailure({ code: 'ETIMEDOUT', message: 'timeout' })).toBe('temporary');
    expect(classifyFailure({ responseCode: 550, message: '550 no such user' })).toBe('permanent');
    expect(classifyFailure({ responseCode: 554, code: 'EENVELOPE', message: '554 rejected' })).toBe('permanent');
    expect(classifyFailure({ code: 'EENVELOPE', message: 'No recipients defined' })).toBe('permanent');
  });

  it('the pause doubles after each failed attempt, up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, RETRY))).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  });

  it('a temporary failure queues the delivery again, due after the backoff, with the error kept', () => {
    const attempted = claim(record(), NOW, LEASE_MS)!;
    const next = attemptFailed(attempted, { responseCode: 451, message: '451 4.3.0 try again later' }, NOW, RETRY);
    expect(next).toMatchObject({ status: 'queued', attempts: 1, lease_until: null, last_error: '451 4.3.0 try again later', outbox_pending: null });
    expect(next.next_attempt_at).toBe(new Date(NOW.getTime() + RETRY.baseMs).toISOString());
    expect(claim(next, new Date(NOW.getTime() + RETRY.baseMs - 1), LEASE_MS)).toBeNull();
    expect(claim(next, new Date(NOW.getTime() + RETRY.baseMs), LEASE_MS)).not.toBeNull();
  });

  it('a permanent failure fails the delivery at once and records the reply, with an outcome event', () => {
    const attempted = claim(record(), NOW, LEASE_MS)!;
    const failed = attemptFailed(attempted, { responseCode: 550, message: '550 5.1.1 mailbox unavailable' }, NOW, RETRY);
    expect(failed).toMatchObject({ status: 'failed', last_error: '550 5.1.1 mailbox unavailable', outbox_pending: true });
    expect(failed.outbox).toEqual([
      expect.objectContaining({
        type: 'mail.delivery.failed',
        payload: { email_delivery_changed: expect.objectContaining({ status: 'failed', error: '550 5.1.1 mailbox unavailable', delivery_id: attempted.delivery_id }) },
      }),
    ]);
  });

  it('retries are bounded: a temporary failure on the last attempt fails the delivery', () => {
    const last = claim(record({ attempts: RETRY.maxAttempts - 1 }), NOW, LEASE_MS)!;
    const failed = attemptFailed(last, { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:25' }, NOW, RETRY);
    expect(failed.status).toBe('failed');
    expect(failed.last_error).toBe(`gave up after ${RETRY.maxAttempts} attempts: connect ECONNREFUSED 127.0.0.1:25`);
  });

  it('the recorded error is the server\'s own reply, without the client\'s wording around it', () => {
    const failed = attemptFailed(claim(record(), NOW, LEASE_MS)!, { responseCode: 550, code: 'EENVELOPE', message: "Can't send mail - all recipients were rejected: 550 5.1.1 <x@y.example>: mailbox unavailable" }, NOW, RETRY);
    expect(failed.last_error).toBe('550 5.1.1 <x@y.example>: mailbox unavailable');
  });

  it('a success records sent_at and one outcome event', () => {
    const sent = succeeded(claim(record(), NOW, LEASE_MS)!, NOW);
    expect(sent).toMatchObject({ status: 'sent', sent_at: NOW.toISOString(), outbox_pending: true });
    expect(sent.outbox.map((e) => e.type)).toEqual(['mail.delivery.sent']);
  });

  it('the mailer walks queued → (temporary) queued → sent, attempting only when due', async () => {
    const w = mailWorld();
    const mailer = w.make();
    const req = request();
    w.smtp.failures.push({ responseCode: 421, message: '421 service not available' }, { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
    await mailer.accept(req);
    expect(await mailer.dispatchDue()).toBe(1);
    expect(await mailer.dispatchDue()).toBe(0); // not due yet
    w.clock.advance(RETRY.baseMs);
    expect(await mailer.dispatchDue()).toBe(1);
    w.clock.advance(2 * RETRY.baseMs - 1);
    expect(await mailer.dispatchDue()).toBe(0);
    w.clock.advance(1);
    expect(await mailer.dispatchDue()).toBe(1);
    const done = (await w.deliveries.findOne({ delivery_id: req.id }))!;
    expect(done).toMatchObject({ status: 'sent', attempts: 3, last_error: null });
    expect(w.smtp.delivered).toHaveLength(1);
    expect(w.outcomes()).toBe(1);
  });
});

describe('the message', () => {
  it('carries the resolved subject and body, cc and bcc, and the PDF', async () => {
    const r = record();
    const mail = composeMail(r, await fakePdfs.pdf({ account_id: 7, livemode: true }, 42), new HandlebarsMailTemplates(), 'ACME <invoices@acme.example>');
    expect(mail).toMatchObject({ subject: 'Faktura 2026000001', to: ['ap@customer.example'], cc: ['cc@customer.example'], bcc: ['archive@acme.example'] });
    expect(mail.text).toContain('v příloze zasíláme fakturu 2026000001');
    expect(mail.html).toContain('<p>Dobrý den,</p>');
    expect(mail.attachments).toEqual([{ filename: 'Faktura 42.pdf', content: expect.any(Buffer), contentType: 'application/pdf' }]);
  });

  it.each([
    ['en', 'Invoice 2026000001', 'please find attached invoice 2026000001'],
    ['cs', 'Faktura 2026000001', 'v příloze zasíláme fakturu 2026000001'],
    ['sk', 'Faktúra 2026000001', 'v prílohe posielame faktúru 2026000001'],
    ['de', 'Rechnung 2026000001', 'anbei erhalten Sie die Rechnung 2026000001'],
  ])('without a subject or body in the request, the %s templates supply them', async (locale, subject, body) => {
    const mail = composeMail(record({ subject: '', message: '', locale }), await fakePdfs.pdf({ account_id: 7, livemode: true }, 42), new HandlebarsMailTemplates(), 'a@acme.example');
    expect(mail.subject).toBe(subject);
    expect(mail.text).toContain(body);
    expect(mail.html).toContain(`lang="${locale}"`);
  });

  it('the .eml outbox writes the message as SMTP would carry it, once per delivery, PDF attached', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'outbox-'));
    const outbox = new EmlOutbox(dir);
    const r = record();
    const mail = composeMail(r, await fakePdfs.pdf({ account_id: 7, livemode: true }, 42), new HandlebarsMailTemplates(), 'ACME <invoices@acme.example>');
    await outbox.deliver(mail);
    await outbox.deliver(mail); // a retried attempt
    expect(readdirSync(dir)).toEqual([`${r.delivery_id}.eml`]);
    const parsed = await simpleParser(readFileSync(path.join(dir, `${r.delivery_id}.eml`)));
    expect(parsed.messageId).toBe(r.message_id);
    expect(parsed.subject).toBe('Faktura 2026000001');
    expect(parsed.text).toContain('v příloze zasíláme fakturu 2026000001');
    expect((parsed.cc as { text: string }).text).toBe('cc@customer.example');
    expect((parsed.bcc as { text: string }).text).toBe('archive@acme.example');
    expect(parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString()])).toEqual([['Faktura 42.pdf', 'application/pdf', '%PDF-1.7 document 42']]);
  });
});

describe('MailService: what happened to a delivery', () => {
  it('GetDelivery / ListDeliveries answer only the tenant (workspace and mode) that requested it', async () => {
    const w = mailWorld();
    const mailer = w.make();
    const live = await mailer.accept(request({ document_id: 42 }));
    await mailer.accept(request({ document_id: 43 }));
    await mailer.accept(request({ document_id: 42, livemode: false }));
    const cursors = new CursorCodec('unit-test-cursor-secret-0123456789');
    expect((await mailer.get({ account_id: 7, livemode: true }, live.delivery_id)).id).toBe(live.id);
    await expect(mailer.get({ account_id: 7, livemode: false }, live.delivery_id)).rejects.toMatchObject({ code: 'resource_not_found' });
    await expect(mailer.get({ account_id: 8, livemode: true }, live.delivery_id)).rejects.toMatchObject({ code: 'resource_not_found' });
    const listed = await mailer.list({ account_id: 7, livemode: true }, 42, undefined, cursors);
    expect(listed.items.map((d) => d.delivery_id)).toEqual([live.delivery_id]);
    expect(toDelivery(listed.items[0])).toMatchObject({ id: live.delivery_id, status: DeliveryStatus.DELIVERY_STATUS_QUEUED, route: 'smtp', message_id: live.message_id, attempts: 0 });
  });
});
