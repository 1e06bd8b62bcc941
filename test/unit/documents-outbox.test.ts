// The documents outbox: events are stored by the same write as their change and published by the relay
// (at-least-once, stable ids) — none lost while the bus is down, none for a change that did not commit.
import { documentsOutbox } from '../../services/documents/adapters/outbox-relay';
import { withEvents } from '../../services/documents/domain/records';
import { MemoryEventBus } from '../../services/shared/bus/memory';
import { BusMessage, EventBus, MessagesRejected, TOPICS } from '../../services/shared/bus/port';
import { OutboxRelay } from '../../services/shared/outbox/relay';
import { fromMessage } from '../../services/shared/events';
import { createLogger } from '../../services/shared/logger';
import { Event } from '../../gen/invoicing/events/v1/events';
import { domain, Domain, errorCode, line, tenant } from './documents.fixtures';

/**
 * A bus whose broker can be "stopped" (publish fails while down), that refuses for good — like Kafka's
 * MESSAGE_TOO_LARGE — a call over `maxCallBytes`, and any call carrying a `poisoned` event id.
 */
class FlakyBus implements EventBus {
  down = false;
  published: BusMessage[] = [];
  calls: number[] = [];
  maxCallBytes = Infinity;
  poisoned = new Set<string>();
  constructor(private readonly inner: EventBus) {}
  async publish(topic: string, messages: BusMessage[]) {
    if (this.down) throw new Error('broker unreachable');
    const bytes = messages.reduce((n, m) => n + m.value.length + m.key.length, 0);
    if (bytes > this.maxCallBytes) throw new MessagesRejected('MESSAGE_TOO_LARGE');
    if (messages.some((m) => this.poisoned.has(fromMessage(m).id))) throw new MessagesRejected('INVALID_RECORD');
    this.calls.push(bytes);
    this.published.push(...messages);
    await this.inner.publish(topic, messages);
  }
  subscribe: EventBus['subscribe'] = (...args) => this.inner.subscribe(...args);
  close = () => this.inner.close();
}

const log = createLogger('test');
log.level = 'silent';

async function collect(bus: EventBus): Promise<Event[]> {
  const seen: Event[] = [];
  await bus.subscribe(TOPICS.documents, { group: 'test', fromBeginning: true }, async (m) => {
    seen.push(fromMessage(m));
  });
  return seen;
}

const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

let d: Domain;
let bus: FlakyBus;
let relay: OutboxRelay;

beforeEach(() => {
  d = domain();
  bus = new FlakyBus(new MemoryEventBus());
  relay = new OutboxRelay([documentsOutbox(d.ctx.store.documents)], bus, log, { intervalMs: 20, batch: 3 });
});
afterEach(() => relay.stop());

describe('outbox', () => {
  it('every change is an event on the change’s own document, written atomically with it', async () => {
    const created = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    expect(created.record.outbox.map((e) => e.type)).toEqual(['documents.invoice.created']);
    await d.documents.update(tenant, 'invoice', created.record.id, { note: 'x' });
    await d.lifecycle.issue(tenant, 'invoice', created.record.id);
    await d.lifecycle.send(tenant, created.record.id, { to: [], cc: [], bcc: [] });
    await d.lifecycle.markPaid(tenant, created.record.id);
    const doc = (await d.ctx.store.documents.get(created.record.id))!;
    expect(doc.outbox.map((e) => e.type)).toEqual([
      'documents.invoice.created',
      'documents.invoice.updated',
      'documents.invoice.issued',
      'documents.invoice.send_requested',
      'documents.invoice.paid',
    ]);
    expect(doc.outbox_pending).toBe(true);
    expect(doc.outbox[1].payload).toMatchObject({ document_changed: { changed_fields: ['note'] } });
    expect(doc.outbox[3].payload).toMatchObject({
      invoice_send_requested: { to: ['ap@customer.example'], subject: `Faktura ${doc.number}`, locale: 'cs', requested_at: doc.email_sent_at },
    });
  });

  it('a refused change publishes nothing', async () => {
    const created = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    expect(await errorCode(d.lifecycle.markPaid(tenant, created.record.id))).toBe('invoice_not_issued');
    expect(await errorCode(d.documents.update(tenant, 'invoice', created.record.id, { currency: 'nope' }))).toBe('invalid_currency');
    expect(await errorCode(d.lifecycle.send(tenant, created.record.id, { to: ['bad'], cc: [], bcc: [] }))).toBe('invalid_email');
    expect((await d.ctx.store.documents.get(created.record.id))!.outbox).toHaveLength(1);
  });

  it('relays events in order, then empties the outbox', async () => {
    const seen = await collect(bus);
    const a = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    await d.lifecycle.issue(tenant, 'invoice', a.record.id);
    const q = await d.documents.create(tenant, 'quote', { purchaser_id: 100 });
    await d.lifecycle.acceptQuote(tenant, q.record.id);
    while ((await relay.relayOnce()) > 0);
    await until(() => seen.length === 4);
    expect(seen.map((e) => e.type)).toEqual(['documents.invoice.created', 'documents.invoice.issued', 'documents.quote.created', 'documents.quote.accepted']);
    expect(seen[1]).toMatchObject({ account_id: tenant.account_id, livemode: true, document_changed: { document_id: a.record.id, status: 'exposed' } });
    expect((await d.ctx.store.documents.get(a.record.id))!).toMatchObject({ outbox: [], outbox_pending: null });
  });

  it('loses nothing while the broker is down and publishes each event once it is back', async () => {
    const seen = await collect(bus);
    relay.start();
    bus.down = true;
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) {
      const doc = await d.documents.create(tenant, 'proforma', { purchaser_id: 100, line_items: [line()] });
      ids.push(doc.record.id);
      d.ctx.notify();
    }
    await d.lifecycle.convertProforma(tenant, ids[0]);
    await new Promise((r) => setTimeout(r, 200));
    expect(seen).toHaveLength(0);
    bus.down = false;
    await until(() => seen.length >= 10, 15_000);
    const unique = new Map(seen.map((e) => [e.id, e]));
    expect(unique.size).toBe(10); // 7 proformas created, invoice created + issued, proforma converted
    expect(seen.length).toBe(unique.size); // the relay removed each event after publishing it
    expect([...unique.values()].filter((e) => e.type === 'documents.proforma.converted')).toHaveLength(1);
  });

  it('a crash between publish and removal republishes with the same ids (consumers de-duplicate)', async () => {
    const seen = await collect(bus);
    await d.documents.create(tenant, 'invoice', { purchaser_id: 100 });
    const documents = d.ctx.store.documents;
    const crashing = new OutboxRelay(
      [
        documentsOutbox({
          ...documents,
          list: (q) => documents.list(q),
          get: (id) => documents.get(id),
          update: async () => {
            throw new Error('crashed before removing');
          },
        } as typeof documents),
      ],
      bus,
      log,
    );
    await expect(crashing.relayOnce()).rejects.toThrow('crashed');
    await relay.relayOnce();
    await until(() => seen.length === 2);
    expect(seen[0].id).toBe(seen[1].id);
  });
});
