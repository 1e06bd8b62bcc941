// email_status / email_error of an invoice: queued by the send, then the outcome the mail service
// reports for that very send request (mail.delivery.sent|failed), consumed from the bus.
import { randomUUID } from 'node:crypto';
import { consumeMailOutcomes } from '../../services/documents/adapters/mail-outcomes';
import { applyDeliveryOutcome } from '../../services/documents/domain/email-status';
import { MemoryEventBus } from '../../services/shared/bus/memory';
import { TOPICS } from '../../services/shared/bus/port';
import { toMessage } from '../../services/shared/events';
import { Event } from '../../gen/invoicing/events/v1/events';
import { domain, Domain, line, tenant } from './documents.fixtures';

let d: Domain;
beforeEach(() => {
  d = domain();
});

async function sentInvoice() {
  const created = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
  await d.lifecycle.issue(tenant, 'invoice', created.record.id);
  await d.lifecycle.send(tenant, created.record.id, { to: [], cc: [], bcc: [] });
  const doc = (await d.ctx.store.documents.get(created.record.id))!;
  return { doc, requestId: doc.outbox.find((e) => e.type === 'documents.invoice.send_requested')!.id };
}

const outcomeEvent = (documentId: number, deliveryId: string, status: 'sent' | 'failed', error = '', who = tenant): Event =>
  Event.fromPartial({
    id: `mail-${deliveryId}-${status}`,
    type: `mail.delivery.${status}`,
    account_id: who.account_id,
    livemode: who.livemode,
    occurred_at: new Date().toISOString(),
    email_delivery_changed: { delivery_id: deliveryId, document_id: documentId, status, error, at: new Date().toISOString() },
  });

describe('email_status of an invoice', () => {
  it('a send sets queued (no error) and remembers which request it is', async () => {
    const { doc, requestId } = await sentInvoice();
    expect(doc).toMatchObject({ email_status: 'queued', email_error: null, email_delivery_id: requestId });
  });

  it('the outcome of that request sets sent, or failed with the reason; a repeated outcome changes nothing', async () => {
    const { doc, requestId } = await sentInvoice();
    const sent = applyDeliveryOutcome(doc, { delivery_id: requestId, status: 'sent', error: '' })!;
    expect(sent).toMatchObject({ email_status: 'sent', email_error: null, updated_at: doc.updated_at });
    expect(applyDeliveryOutcome(sent, { delivery_id: requestId, status: 'sent', error: '' })).toBeNull();
    const failed = applyDeliveryOutcome(doc, { delivery_id: requestId, status: 'failed', error: '550 5.1.1 no such user' })!;
    expect(failed).toMatchObject({ email_status: 'failed', email_error: '550 5.1.1 no such user' });
  });

  it('the outcome of an earlier send does not touch the status of the latest one', async () => {
    const { doc, requestId: first } = await sentInvoice();
    await d.lifecycle.send(tenant, doc.id, { to: ['other@customer.example'], cc: [], bcc: [] });
    const resent = (await d.ctx.store.documents.get(doc.id))!;
    expect(resent.email_delivery_id).not.toBe(first);
    expect(applyDeliveryOutcome(resent, { delivery_id: first, status: 'failed', error: '550 no' })).toBeNull();
  });

  it('is applied from the bus, once, and only to the invoice of the event’s workspace and mode, with its email event in the same write', async () => {
    const bus = new MemoryEventBus();
    const sub = await consumeMailOutcomes(bus, d.ctx.store.documents, d.ctx.events, { notify: () => undefined });
    const { doc, requestId } = await sentInvoice();
    await bus.publish(TOPICS.mail, [toMessage(outcomeEvent(doc.id, requestId, 'failed', '550 rejected', { account_id: tenant.account_id, livemode: !tenant.livemode }))]);
    await bus.publish(TOPICS.mail, [toMessage(outcomeEvent(doc.id, randomUUID(), 'sent'))]);
    await bus.publish(TOPICS.mail, [toMessage(outcomeEvent(doc.id, requestId, 'failed', '550 5.1.1 mailbox unavailable'))]);
    await bus.publish(TOPICS.mail, [toMessage(outcomeEvent(doc.id, requestId, 'failed', '550 5.1.1 mailbox unavailable'))]);
    for (let i = 0; i < 50 && (await d.ctx.store.documents.get(doc.id))!.email_status === 'queued'; i++) await new Promise((r) => setTimeout(r, 10));
    const after = (await d.ctx.store.documents.get(doc.id))!;
    expect(after).toMatchObject({ email_status: 'failed', email_error: '550 5.1.1 mailbox unavailable', version: doc.version + 1 });
    // The tenant's email.failed event: on the invoice's outbox, with the invoice as that write left it.
    const emailEvents = after.outbox.filter((e) => e.type.startsWith('documents.invoice.email_'));
    expect(emailEvents.map((e) => e.type)).toEqual(['documents.invoice.email_failed']);
    expect(emailEvents[0].object).toMatchObject({ id: doc.id, email_status: 'failed', email_error: '550 5.1.1 mailbox unavailable' });
    await sub.close();
  });
});
