// Spec §4 send, delivered: the invoice e-mail leaves the system with its PDF attached — as an .eml file
// under DATA_DIR/outbox when no SMTP server is configured (embedded default), over SMTP to Mailpit in
// distributed mode — and the invoice shows what became of it (email_status, email_error). Test-mode
// invoices only ever reach the local outbox. Refusals: 5xx fails the delivery, 4xx is retried.
import { ParsedMail } from 'mailparser';
import { randomBytes } from 'node:crypto';
import { Api, eventually } from '../support/api';
import { createPurchaser, docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { tokenFor } from '../support/fixtures';
import { mailpitMessagesTo, outboxMessages, recipients } from '../support/mail';
import { startScriptedSmtpServer, ScriptedSmtpServer } from '../support/scripted-smtp-server';
import { startSystem, System } from '../support/system';

const FAST_MAIL = { MAIL_POLL_MS: '100', MAIL_RETRY_BASE_MS: '200', MAIL_RETRY_MAX_MS: '400' };
const address = (label: string) => `${label}-${randomBytes(5).toString('hex')}@customer.example`;

async function issuedInvoice(api: Api, base: string, purchaserId: number) {
  const created = await api.post(`${base}/invoices`, { purchaser_id: purchaserId, line_items: [line('1250', '21')] });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  const issued = await api.post(`${base}/invoices/${created.body.id}/issue`);
  if (issued.status !== 200) throw new Error(`issue: ${issued.status} ${issued.text}`);
  return issued.body;
}

async function statusEventually(api: Api, base: string, id: number, status: string, timeoutMs = 30_000) {
  return eventually(async () => {
    const res = await api.get(`${base}/invoices/${id}`);
    expect(res.body.email_status).toBe(status);
    return res.body;
  }, timeoutMs);
}

function expectPdfAttached(message: ParsedMail) {
  expect(message.attachments).toHaveLength(1);
  const [pdf] = message.attachments;
  expect(pdf.contentType).toBe('application/pdf');
  expect(pdf.filename).toMatch(/\.pdf$/);
  expect(pdf.content.subarray(0, 5).toString()).toBe('%PDF-');
}

describe('POST invoices/<id>/send — the e-mail is delivered', () => {
  let system: System;
  let ws: DocsWorkspace;

  beforeAll(async () => {
    system = await startSystem({ env: FAST_MAIL });
    ws = await docsWorkspace(system);
  });
  afterAll(() => system?.stop());

  /** The delivered copies of the message to `to`: the outbox (embedded) or Mailpit (distributed). */
  const delivered = (to: string) =>
    system.mode === 'embedded' ? outboxMessages(system).then((all) => all.filter((m) => recipients(m, 'to').includes(to))) : mailpitMessagesTo(to);

  it('with the PDF attached, to/cc/bcc, subject and body as resolved, a Message-ID of the send request; email_status queued → sent', async () => {
    const to = address('ap');
    const cc = address('cc');
    const bcc = address('bcc');
    const purchaser = await createPurchaser(ws.api, ws.base, 'Mail Customer a.s.', to);
    const invoice = await issuedInvoice(ws.api, ws.base, purchaser);
    const sent = await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`, { cc, bcc });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ email_status: 'queued', email_error: null });

    const after = await statusEventually(ws.api, ws.base, invoice.id, 'sent');
    expect(after.email_error).toBeNull();
    const messages = await eventually(async () => {
      const found = await delivered(to);
      expect(found).toHaveLength(1);
      return found;
    });
    const [message] = messages;
    expect(message.messageId).toMatch(/^<send-[0-9a-f-]{36}@invoicing\.localhost>$/);
    expect(message.subject).toBe(`Faktura ${invoice.number}`);
    expect(message.text).toContain(invoice.number);
    expect(recipients(message, 'to')).toEqual([to]);
    expect(recipients(message, 'cc')).toEqual([cc]);
    expectPdfAttached(message);
    if (system.mode === 'distributed') {
      // Bcc is an envelope recipient only: Mailpit received a copy for it, and nothing went to the outbox.
      expect(await mailpitMessagesTo(bcc)).toHaveLength(1);
      expect((await outboxMessages(system)).filter((m) => recipients(m, 'to').includes(to))).toEqual([]);
    } else {
      expect(recipients(message, 'bcc')).toEqual([bcc]);
    }
  });

  it('each send is a delivery of its own (its own Message-ID); the status follows the latest', async () => {
    const to = address('twice');
    const purchaser = await createPurchaser(ws.api, ws.base, 'Twice a.s.', to);
    const invoice = await issuedInvoice(ws.api, ws.base, purchaser);
    await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`);
    await statusEventually(ws.api, ws.base, invoice.id, 'sent');
    const again = await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`, { subject: 'Reminder' });
    expect(again.body.email_status).toBe('queued');
    await statusEventually(ws.api, ws.base, invoice.id, 'sent');
    const messages = await eventually(async () => {
      const found = await delivered(to);
      expect(found).toHaveLength(2);
      return found;
    });
    expect(new Set(messages.map((m) => m.messageId)).size).toBe(2);
    expect(messages.map((m) => m.subject).sort()).toEqual([`Faktura ${invoice.number}`, 'Reminder']);
  });

  it('a send retried under the same Idempotency-Key mails once', async () => {
    const to = address('retried');
    const purchaser = await createPurchaser(ws.api, ws.base, 'Retry a.s.', to);
    const invoice = await issuedInvoice(ws.api, ws.base, purchaser);
    const headers = { 'Idempotency-Key': `send-${randomBytes(8).toString('hex')}` };
    const first = await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`, {}, { headers });
    const retry = await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`, {}, { headers });
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.body.email_sent_at).toBe(first.body.email_sent_at);
    await statusEventually(ws.api, ws.base, invoice.id, 'sent');
    // A later, different send is a new e-mail: it proves the mail service had caught up with the first.
    await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`, { subject: 'Second' });
    await statusEventually(ws.api, ws.base, invoice.id, 'sent');
    const messages = await eventually(async () => {
      const found = await delivered(to);
      expect(found).toHaveLength(2);
      return found;
    });
    expect(messages.map((m) => m.subject).sort()).toEqual([`Faktura ${invoice.number}`, 'Second']);
  });

  it('a test-mode invoice is "sent" to the local outbox only, never to its recipients', async () => {
    const token = await tokenFor(system, 'test', ws.id, 'all');
    const sandbox = new Api(system.baseUrl, token);
    const to = address('sandbox');
    const purchaser = await createPurchaser(sandbox, ws.base, 'Sandbox Buyer', to);
    const invoice = await issuedInvoice(sandbox, ws.base, purchaser);
    expect((await sandbox.post(`${ws.base}/invoices/${invoice.id}/send`)).body.email_status).toBe('queued');
    await statusEventually(sandbox, ws.base, invoice.id, 'sent');
    const inOutbox = (await outboxMessages(system)).filter((m) => recipients(m, 'to').includes(to));
    expect(inOutbox).toHaveLength(1);
    expectPdfAttached(inOutbox[0]);
    if (system.mode === 'distributed') expect(await mailpitMessagesTo(to)).toEqual([]);
  });

  it('an invoice never sent has email_status null', async () => {
    const invoice = await issuedInvoice(ws.api, ws.base, ws.purchaser);
    expect(invoice).toMatchObject({ email_status: null, email_error: null });
  });
});

describe('POST invoices/<id>/send — the mail server refuses', () => {
  let smtp: ScriptedSmtpServer;
  let system: System;
  let ws: DocsWorkspace;

  beforeAll(async () => {
    smtp = await startScriptedSmtpServer();
    system = await startSystem({ env: { ...FAST_MAIL, SMTP_URL: smtp.url } });
    ws = await docsWorkspace(system);
  });
  afterAll(async () => {
    await system?.stop();
    await smtp?.close();
  });

  it('a permanent refusal (5xx) fails the delivery at once: email_status failed, the reply in email_error', async () => {
    const to = address('gone');
    smtp.reject.add(to);
    const purchaser = await createPurchaser(ws.api, ws.base, 'Gone GmbH', to);
    const invoice = await issuedInvoice(ws.api, ws.base, purchaser);
    expect((await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`)).body.email_status).toBe('queued');
    const failed = await statusEventually(ws.api, ws.base, invoice.id, 'failed');
    expect(failed.email_error).toMatch(/^550 5\.1\.1 .*mailbox unavailable/);
    expect(smtp.accepted.filter((m) => m.includes(to))).toEqual([]);
  });

  it('a temporary refusal (4xx) is retried with backoff until accepted, then sent once', async () => {
    const to = address('greylisted');
    smtp.defer.set(to, 2);
    const purchaser = await createPurchaser(ws.api, ws.base, 'Greylist s.r.o.', to);
    const invoice = await issuedInvoice(ws.api, ws.base, purchaser);
    await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`);
    const sent = await statusEventually(ws.api, ws.base, invoice.id, 'sent');
    expect(sent.email_error).toBeNull();
    expect(smtp.defer.get(to)).toBe(0);
    expect(smtp.accepted.filter((m) => m.includes(to))).toHaveLength(1);
  });
});
