// Sending has limits a real mail platform would set (issue #17): recipients per call (to + cc + bcc
// ≤ 10, 422 too_many_recipients) and recipients per workspace per UTC day (the plan's
// mail_recipients_per_day, 402 daily_recipient_limit_reached). A refusal queues nothing: no
// send_requested event, no email_status change. The daily count holds for what is written under any
// interleaving of two sends (driven by a latch between reading the counter and writing it).
import { MailAllowanceCounter } from '../../services/documents/domain/mail-allowance';
import { MAX_RECIPIENTS_PER_SEND } from '../../services/documents/domain/send';
import { domain, Domain, errorCode, line, tenant, tempDbFile } from './documents.fixtures';

const emails = (n: number, label = 'r') => Array.from({ length: n }, (_, i) => `${label}${i}@customer.example`);
const sendEvents = (doc: { outbox: Array<{ type: string }> }) => doc.outbox.filter((e) => e.type === 'documents.invoice.send_requested');

async function issuedInvoice(d: Domain) {
  const created = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
  return (await d.lifecycle.issue(tenant, 'invoice', created.record.id)).record;
}

/** A latch: `wait()` resolves once `open()` was called. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, wait: () => opened };
}

describe('recipients per call', () => {
  it(`to + cc + bcc may name at most ${MAX_RECIPIENTS_PER_SEND} addresses; above → 422 too_many_recipients, nothing queued`, async () => {
    const d = domain();
    const invoice = await issuedInvoice(d);
    expect(await errorCode(d.lifecycle.send(tenant, invoice.id, { to: emails(4, 't'), cc: emails(4, 'c'), bcc: emails(3, 'b') }))).toBe('too_many_recipients');
    const after = (await d.ctx.store.documents.get(invoice.id))!;
    expect(after.email_status ?? null).toBeNull();
    expect(after.email_sent_at).toBeNull();
    expect(sendEvents(after)).toEqual([]);
    expect(await d.ctx.mailAllowance.used(tenant, d.clock.now())).toBe(0);
    const sent = await d.lifecycle.send(tenant, invoice.id, { to: emails(4, 't'), cc: emails(3, 'c'), bcc: emails(3, 'b') });
    expect(sent.record.email_status).toBe('queued');
  });

  it('the purchaser default counts as one recipient', async () => {
    const d = domain();
    const invoice = await issuedInvoice(d);
    expect(await errorCode(d.lifecycle.send(tenant, invoice.id, { to: [], cc: emails(5, 'c'), bcc: emails(5, 'b') }))).toBe('too_many_recipients');
    await d.lifecycle.send(tenant, invoice.id, { to: [], cc: emails(5, 'c'), bcc: emails(4, 'b') });
    expect(await d.ctx.mailAllowance.used(tenant, d.clock.now())).toBe(10);
  });
});

describe('recipients per workspace per day', () => {
  it('the plan’s allowance is metered per recipient; beyond it → 402 daily_recipient_limit_reached with the limit, and nothing is queued', async () => {
    const d = domain();
    const invoice = await issuedInvoice(d);
    await d.lifecycle.send(tenant, invoice.id, { to: emails(3), cc: [], bcc: [] }, undefined, 5);
    const before = (await d.ctx.store.documents.get(invoice.id))!;
    const refused = d.lifecycle.send(tenant, invoice.id, { to: emails(3), cc: [], bcc: [] }, undefined, 5);
    await expect(refused).rejects.toMatchObject({
      kind: 'resource_exhausted',
      code: 'daily_recipient_limit_reached',
      metadata: { feature: 'mail_recipients_per_day', limit: '5', used: '3' },
    });
    const after = (await d.ctx.store.documents.get(invoice.id))!;
    expect(after.version).toBe(before.version);
    expect(after.email_delivery_id).toBe(before.email_delivery_id);
    expect(await d.ctx.mailAllowance.used(tenant, d.clock.now())).toBe(3);
    // What still fits is sent.
    await d.lifecycle.send(tenant, invoice.id, { to: emails(2), cc: [], bcc: [] }, undefined, 5);
    expect(await d.ctx.mailAllowance.used(tenant, d.clock.now())).toBe(5);
  });

  it('without a plan allowance the service default applies; live and sandbox are counted apart; a new UTC day starts again', async () => {
    const d = domain(tempDbFile(), undefined, { mailRecipientsPerDayDefault: 2 });
    const invoice = await issuedInvoice(d);
    await d.lifecycle.send(tenant, invoice.id, { to: emails(2), cc: [], bcc: [] });
    expect(await errorCode(d.lifecycle.send(tenant, invoice.id, { to: emails(1), cc: [], bcc: [] }))).toBe('daily_recipient_limit_reached');
    const sandbox = { ...tenant, livemode: false };
    expect(await d.ctx.mailAllowance.take(sandbox, 2, 2, d.clock.now())).toBe(true);
    d.clock.base += 24 * 3600_000;
    await d.lifecycle.send(tenant, invoice.id, { to: emails(2), cc: [], bcc: [] });
    expect(await d.ctx.mailAllowance.used(tenant, d.clock.now())).toBe(2);
  });

  it('a send that is refused after metering (no recipient left after defaults) gives its recipients back', async () => {
    const d = domain();
    const created = await d.documents.create(tenant, 'invoice', { purchaser_id: 101, line_items: [line()] }); // a purchaser without e-mail
    expect(await errorCode(d.lifecycle.send(tenant, created.record.id, { to: [], cc: [], bcc: [] }, undefined, 5))).toBe('missing_recipient');
    expect(await d.ctx.mailAllowance.used(tenant, d.clock.now())).toBe(0);
  });

  it('a send replayed under its Idempotency-Key is not metered again', async () => {
    const d = domain();
    const invoice = await issuedInvoice(d);
    const token = { key: 'k-1', fingerprint: 'f' };
    await d.lifecycle.send(tenant, invoice.id, { to: emails(3), cc: [], bcc: [] }, token, 3);
    const replay = await d.lifecycle.send(tenant, invoice.id, { to: emails(3), cc: [], bcc: [] }, token, 3);
    expect(sendEvents(replay.record)).toHaveLength(1);
    expect(await d.ctx.mailAllowance.used(tenant, d.clock.now())).toBe(3);
  });

  it('two sends racing for the last recipients: whatever the interleaving, one is sent and one refused; the count never exceeds the allowance', async () => {
    // Both read the counter (used 0 of 4) before either writes: the latch holds each between its read
    // and its compare-and-set.
    const bothRead = latch();
    const reads: MailAllowanceCounter[] = [];
    const d = domain(tempDbFile(), undefined, {
      mailAllowanceHooks: {
        beforeWrite: async (counter) => {
          reads.push(counter);
          if (reads.length === 2) bothRead.open();
          await bothRead.wait();
        },
      },
    });
    const a = await issuedInvoice(d);
    const b = await issuedInvoice(d);
    const results = await Promise.allSettled([
      d.lifecycle.send(tenant, a.id, { to: emails(3, 'a'), cc: [], bcc: [] }, undefined, 4),
      d.lifecycle.send(tenant, b.id, { to: emails(3, 'b'), cc: [], bcc: [] }, undefined, 4),
    ]);
    expect(reads.slice(0, 2).map((c) => c.used)).toEqual([0, 0]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'daily_recipient_limit_reached' });
    expect(await d.ctx.mailAllowance.used(tenant, d.clock.now())).toBe(3);
    const docs = [(await d.ctx.store.documents.get(a.id))!, (await d.ctx.store.documents.get(b.id))!];
    expect(docs.filter((doc) => doc.email_status === 'queued')).toHaveLength(1);
    expect(docs.flatMap(sendEvents)).toHaveLength(1);
  });

  it('two sends that both fit, interleaved the same way, are both counted (no lost update)', async () => {
    const bothRead = latch();
    let readers = 0;
    const d = domain(tempDbFile(), undefined, {
      mailAllowanceHooks: {
        beforeWrite: async () => {
          if (++readers === 2) bothRead.open();
          await bothRead.wait();
        },
      },
    });
    const a = await issuedInvoice(d);
    const b = await issuedInvoice(d);
    await Promise.all([
      d.lifecycle.send(tenant, a.id, { to: emails(2, 'a'), cc: [], bcc: [] }, undefined, 4),
      d.lifecycle.send(tenant, b.id, { to: emails(2, 'b'), cc: [], bcc: [] }, undefined, 4),
    ]);
    expect(await d.ctx.mailAllowance.used(tenant, d.clock.now())).toBe(4);
  });
});
