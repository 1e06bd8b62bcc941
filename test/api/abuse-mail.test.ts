// Issue #17, "Use send as a bulk mailer": sending has limits a real mail platform would set, tried as a
// hostile tenant would. Recipients per call (to + cc + bcc ≤ 10 → 422 too_many_recipients); recipients
// per workspace per day (the plan's mail_recipients_per_day → 402 daily_recipient_limit_reached with
// upgrade_url); a refusal queues nothing. Test mode never reaches SMTP (distributed: Mailpit; embedded:
// a local relay). The PDF attached is the version the send was accepted for, whatever happens to the
// invoice before the relay takes it; a relay that stalls is abandoned at the attempt's deadline and the
// e-mail is sent once.
import { ParsedMail, simpleParser } from 'mailparser';
import { randomBytes } from 'node:crypto';
import { Api, eventually } from '../support/api';
import { createPurchaser, CZ_SUPPLIER, line } from '../support/documents';
import { createWorkspace, tokenFor } from '../support/fixtures';
import { mailpitMessagesTo, outboxMessages, recipients } from '../support/mail';
import { pdfText } from '../support/pdf';
import { ScriptedSmtpServer, startScriptedSmtpServer } from '../support/scripted-smtp-server';
import { startSystem, System } from '../support/system';

const FAST_MAIL = { MAIL_POLL_MS: '100', MAIL_RETRY_BASE_MS: '200', MAIL_RETRY_MAX_MS: '400', MAIL_MAX_ATTEMPTS: '50' };
const address = (label: string) => `${label}-${randomBytes(5).toString('hex')}@customer.example`;
const addresses = (n: number, label: string) => Array.from({ length: n }, (_, i) => address(`${label}${i}`));

interface MailWorkspace {
  id: number;
  api: Api;
  base: string;
  purchaser: number;
}

/** A Czech workspace, its plan set before its first request (so no gateway has its old plan cached). */
async function mailWorkspace(system: System, quotas: string[] = []): Promise<MailWorkspace> {
  const ws = await createWorkspace(system, 'Mailer s.r.o.');
  if (quotas.length) await system.cli('plan', 'set', '--workspace', String(ws.id), ...quotas.flatMap((q) => ['--quota', q]));
  await system.cli('workspace', 'set-legal-identity', '--workspace', String(ws.id), '--data', JSON.stringify(CZ_SUPPLIER));
  const api = new Api(system.baseUrl, ws.pat);
  const base = `/api/v1/accounts/${ws.id}`;
  return { id: ws.id, api, base, purchaser: await createPurchaser(api, base, 'Customer a.s.', address('ap')) };
}

async function issuedInvoice(api: Api, base: string, purchaserId: number) {
  const created = await api.post(`${base}/invoices`, { purchaser_id: purchaserId, line_items: [line('1250', '21')] });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  const issued = await api.post(`${base}/invoices/${created.body.id}/issue`);
  if (issued.status !== 200) throw new Error(`issue: ${issued.status} ${issued.text}`);
  return issued.body;
}

async function statusEventually(api: Api, base: string, id: number, status: string) {
  return eventually(async () => {
    const res = await api.get(`${base}/invoices/${id}`);
    expect(res.body.email_status).toBe(status);
    return res.body;
  }, 60_000);
}

describe('sending limits: recipients per call and per workspace per day', () => {
  let system: System;
  /** Embedded: a local relay stands in for SMTP. Distributed: Mailpit (the system's own SMTP_URL). */
  let relay: ScriptedSmtpServer | undefined;

  beforeAll(async () => {
    if ((process.env.API_MODE ?? 'embedded') === 'embedded') relay = await startScriptedSmtpServer();
    system = await startSystem({ env: { ...FAST_MAIL, ...(relay ? { SMTP_URL: relay.url } : {}) } });
  });
  afterAll(async () => {
    await system?.stop();
    await relay?.close();
  });

  /** Every message the SMTP relay received for `to` (any of To, Cc, Bcc). */
  const reachedSmtp = async (to: string): Promise<ParsedMail[]> => {
    if (!relay) return mailpitMessagesTo(to);
    // The envelope (RCPT TO) is not in the message: a Bcc recipient shows only as an address in the raw text.
    return Promise.all(relay.accepted.filter((raw) => raw.includes(to)).map((raw) => simpleParser(raw)));
  };

  it('to + cc + bcc naming more than 10 addresses → 422 too_many_recipients; nothing is queued', async () => {
    const ws = await mailWorkspace(system);
    const invoice = await issuedInvoice(ws.api, ws.base, ws.purchaser);
    const refused = await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`, { to: addresses(4, 'to'), cc: addresses(4, 'cc'), bcc: addresses(3, 'bcc') });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('too_many_recipients');
    const after = await ws.api.get(`${ws.base}/invoices/${invoice.id}`);
    expect(after.body).toMatchObject({ email_status: null, email_sent_at: null, updated_at: invoice.updated_at });
    // Exactly ten is a send.
    const ten = await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`, { to: addresses(4, 'to'), cc: addresses(3, 'cc'), bcc: addresses(3, 'bcc') });
    expect(ten.status).toBe(200);
    expect(ten.body.email_status).toBe('queued');
  });

  it('beyond the plan’s daily recipients → 402 daily_recipient_limit_reached with upgrade_url; nothing is queued, the invoice unchanged', async () => {
    const ws = await mailWorkspace(system, ['mail_recipients_per_day=12']);
    const first = await issuedInvoice(ws.api, ws.base, ws.purchaser);
    const sent = await ws.api.post(`${ws.base}/invoices/${first.id}/send`, { to: addresses(10, 'bulk') });
    expect(sent.status).toBe(200);
    const second = await issuedInvoice(ws.api, ws.base, ws.purchaser);
    const refusedTo = addresses(3, 'refused');
    const refused = await ws.api.post(`${ws.base}/invoices/${second.id}/send`, { to: refusedTo });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('daily_recipient_limit_reached');
    expect(refused.body.error.upgrade_url).toMatch(/^https?:\/\//);
    expect(refused.body.error.message).toMatch(/12 e-mail recipients per day/);
    const untouched = await ws.api.get(`${ws.base}/invoices/${second.id}`);
    expect(untouched.body).toMatchObject({ email_status: null, email_sent_at: null, updated_at: second.updated_at });
    // What still fits is sent; then the allowance is used up.
    const fits = address('fits');
    expect((await ws.api.post(`${ws.base}/invoices/${second.id}/send`, { to: fits, cc: address('cc') })).status).toBe(200);
    expect((await ws.api.post(`${ws.base}/invoices/${second.id}/send`, { to: address('one-more') })).status).toBe(402);
    // Nothing was queued for the refused request: the later send (queued after it) is delivered, the
    // refused recipients never are.
    await statusEventually(ws.api, ws.base, second.id, 'sent');
    await eventually(async () => expect(await reachedSmtp(fits)).toHaveLength(1), 60_000);
    for (const to of refusedTo) expect(await reachedSmtp(to)).toEqual([]);
  });

  it('the daily allowance is per workspace: another workspace still sends', async () => {
    const capped = await mailWorkspace(system, ['mail_recipients_per_day=1']);
    const other = await mailWorkspace(system);
    const a = await issuedInvoice(capped.api, capped.base, capped.purchaser);
    expect((await capped.api.post(`${capped.base}/invoices/${a.id}/send`)).status).toBe(200);
    expect((await capped.api.post(`${capped.base}/invoices/${a.id}/send`)).status).toBe(402);
    const b = await issuedInvoice(other.api, other.base, other.purchaser);
    expect((await other.api.post(`${other.base}/invoices/${b.id}/send`, { to: addresses(5, 'other') })).status).toBe(200);
  });

  it('test mode never reaches SMTP: a test-credential send goes to the local outbox only, a live one reaches the relay', async () => {
    const ws = await mailWorkspace(system);
    const sandbox = new Api(system.baseUrl, await tokenFor(system, 'test', ws.id, 'all'));
    const testTo = address('sandbox');
    const testPurchaser = await createPurchaser(sandbox, ws.base, 'Sandbox Buyer', testTo);
    const testInvoice = await issuedInvoice(sandbox, ws.base, testPurchaser);
    expect((await sandbox.post(`${ws.base}/invoices/${testInvoice.id}/send`)).status).toBe(200);
    await statusEventually(sandbox, ws.base, testInvoice.id, 'sent');
    // The live send after it: once it has reached the relay, the test one (delivered first) would have too.
    const liveTo = address('live');
    const livePurchaser = await createPurchaser(ws.api, ws.base, 'Live Buyer', liveTo);
    const liveInvoice = await issuedInvoice(ws.api, ws.base, livePurchaser);
    expect((await ws.api.post(`${ws.base}/invoices/${liveInvoice.id}/send`)).status).toBe(200);
    await statusEventually(ws.api, ws.base, liveInvoice.id, 'sent');
    await eventually(async () => expect(await reachedSmtp(liveTo)).toHaveLength(1), 60_000);
    expect(await reachedSmtp(testTo)).toEqual([]);
    expect((await outboxMessages(system)).filter((m) => recipients(m, 'to').includes(testTo))).toHaveLength(1);
  });
});

describe('what the relay gets: the version sent for, once, within the attempt deadline', () => {
  let relay: ScriptedSmtpServer;
  let system: System;
  let ws: MailWorkspace;

  beforeAll(async () => {
    relay = await startScriptedSmtpServer();
    system = await startSystem({ env: { ...FAST_MAIL, SMTP_URL: relay.url, MAIL_SMTP_TIMEOUT_MS: '1500' } });
    ws = await mailWorkspace(system);
  });
  afterAll(async () => {
    await system?.stop();
    await relay?.close();
  });

  const acceptedFor = (to: string) => relay.accepted.filter((raw) => raw.includes(to));

  it('the PDF attached is the one current when send was accepted, even when the invoice is marked paid before the relay takes it', async () => {
    const to = address('pinned');
    const purchaser = await createPurchaser(ws.api, ws.base, 'Pinned a.s.', to);
    const invoice = await issuedInvoice(ws.api, ws.base, purchaser);
    relay.defer.set(to, 1_000); // the relay holds the delivery back (451) until the test lets it through
    expect((await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`)).status).toBe(200);
    await eventually(async () => expect(relay.defer.get(to)).toBeLessThan(1_000), 60_000); // attempted at least once
    const paid = await ws.api.post(`${ws.base}/invoices/${invoice.id}/mark_paid`);
    expect(paid.status).toBe(200);
    relay.defer.set(to, 0);
    await statusEventually(ws.api, ws.base, invoice.id, 'sent');
    expect(acceptedFor(to)).toHaveLength(1);
    const [attachment] = (await simpleParser(acceptedFor(to)[0])).attachments;
    const now = await ws.api.get(`${ws.base}/invoices/${invoice.id}/pdf`);
    expect(now.status).toBe(200);
    expect(await pdfText(now.bytes)).toContain('ZAPLACENO');
    const sentText = await pdfText(attachment.content);
    expect(sentText).toContain(invoice.number);
    expect(sentText).not.toContain('ZAPLACENO');
  });

  it('a relay that stalls is abandoned at the attempt deadline; the e-mail is retried later and accepted once', async () => {
    const to = address('stalled');
    const purchaser = await createPurchaser(ws.api, ws.base, 'Slow Relay GmbH', to);
    const invoice = await issuedInvoice(ws.api, ws.base, purchaser);
    relay.stall.set(to, 1);
    expect((await ws.api.post(`${ws.base}/invoices/${invoice.id}/send`)).status).toBe(200);
    const sent = await statusEventually(ws.api, ws.base, invoice.id, 'sent');
    expect(sent.email_error).toBeNull();
    const stalled = relay.stalled.filter((s) => s.address === to);
    expect(stalled).toHaveLength(1);
    // Closed by the client at its deadline (1.5 s), long before nodemailer's own 30 s socket timeout.
    expect(stalled[0].closedAt).not.toBeNull();
    expect(stalled[0].closedAt! - stalled[0].at).toBeLessThan(15_000);
    expect(acceptedFor(to)).toHaveLength(1);
  });
});
