// The documents outbox: events are stored by the same write as their change and published by the relay
// (at-least-once, stable ids) — none lost while the bus is down, none for a change that did not commit.
import { documentsOutbox } from '../../services/documents/adapters/outbox-relay';
import { withEvents } from '../../services/documents/domain/records';
import { MemoryEventBus } from '../../services/shared/bus/memory';
import { BusMessage, EventBus, MessagesRejected, TOPICS } from '../../services/shared/bus/port';
import { outboxRelayOptions } from '../../services/shared/outbox/options';
import { DEFAULT_MAX_BATCH_BYTES, OutboxRelay } from '../../services/shared/outbox/relay';
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

/** Each document's events as published, in publication order (de-duplicated by id). */
function perDocument(events: Event[]): Map<number, Event[]> {
  const byDoc = new Map<number, Event[]>();
  const seen = new Set<string>();
  for (const e of events) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    const id = e.document_changed?.document_id ?? e.invoice_send_requested?.document_id ?? e.document_converted?.source_id ?? 0;
    byDoc.set(id, [...(byDoc.get(id) ?? []), e]);
  }
  return byDoc;
}

const decoded = () => bus.published.map(fromMessage);

describe('outbox relay: order', () => {
  it('takes the documents with the oldest pending events first', async () => {
    const oldest = await d.documents.create(tenant, 'invoice', { purchaser_id: 100 });
    for (let i = 0; i < 6; i++) {
      d.clock.base += 1000;
      await d.documents.create(tenant, 'invoice', { purchaser_id: 100 });
    }
    await relay.relayOnce(); // a batch is 3 documents
    expect(decoded().map((e) => e.document_changed!.document_id)).toEqual([oldest.record.id, oldest.record.id + 1, oldest.record.id + 2]);
  });

  it('publishes a document’s events in the order they were written, whatever the clocks said', async () => {
    const doc = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    d.clock.base -= 60_000; // the next write comes from a replica whose clock is a minute behind
    await d.documents.update(tenant, 'invoice', doc.record.id, { note: 'later' });
    d.clock.base -= 60_000;
    await d.lifecycle.issue(tenant, 'invoice', doc.record.id);
    while ((await relay.relayOnce()) > 0);
    const events = decoded();
    expect(events.map((e) => e.type)).toEqual(['documents.invoice.created', 'documents.invoice.updated', 'documents.invoice.issued']);
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3]);
  });

  it('numbers a document’s events on, across publications (the sequence survives the emptied outbox)', async () => {
    const doc = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    while ((await relay.relayOnce()) > 0);
    await d.lifecycle.issue(tenant, 'invoice', doc.record.id);
    await d.lifecycle.markPaid(tenant, doc.record.id);
    while ((await relay.relayOnce()) > 0);
    expect(decoded().map((e) => [e.type, e.sequence])).toEqual([
      ['documents.invoice.created', 1],
      ['documents.invoice.issued', 2],
      ['documents.invoice.paid', 3],
    ]);
  });
});

describe('outbox relay: backlog', () => {
  it('after an outage, publishes a backlog larger than the broker takes in one call, in bounded batches', async () => {
    bus.maxCallBytes = 8 * 1024; // the broker's message.max.bytes
    relay = new OutboxRelay([documentsOutbox(d.ctx.store.documents)], bus, log, { intervalMs: 20, maxBatchBytes: 6 * 1024 });
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push((await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] })).record.id);
    for (const id of ids) for (let n = 0; n < 4; n++) await d.documents.update(tenant, 'invoice', id, { note: `change ${n}` });
    while ((await relay.relayOnce()) > 0);
    expect(bus.calls.length).toBeGreaterThan(1);
    expect(Math.max(...bus.calls)).toBeLessThanOrEqual(6 * 1024);
    const byDoc = perDocument(decoded());
    expect(bus.published).toHaveLength(12 * 5); // each once
    for (const id of ids) expect(byDoc.get(id)!.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(relay.counts).toEqual({ published: 60, dead_lettered: 0 });
  });

  it('sets aside an event too large to ever be published, keeps it on its document, logs and counts it, and publishes the rest', async () => {
    const errors: unknown[] = [];
    const spy = { ...log, error: (obj: unknown) => errors.push(obj), warn: () => undefined } as unknown as typeof log;
    relay = new OutboxRelay([documentsOutbox(d.ctx.store.documents)], bus, spy, { intervalMs: 20, maxBatchBytes: 4 * 1024 });
    const doc = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    await d.lifecycle.issue(tenant, 'invoice', doc.record.id);
    await d.lifecycle.send(tenant, doc.record.id, { to: [], cc: [], bcc: [], message: 'x'.repeat(6000) });
    await d.lifecycle.markPaid(tenant, doc.record.id);
    const other = await d.documents.create(tenant, 'quote', { purchaser_id: 100 });
    while ((await relay.relayOnce()) > 0);
    expect(decoded().map((e) => e.type)).toEqual([
      'documents.invoice.created',
      'documents.invoice.issued',
      'documents.invoice.paid',
      'documents.quote.created',
    ]);
    const stored = (await d.ctx.store.documents.get(doc.record.id))!;
    expect(stored).toMatchObject({ outbox: [], outbox_pending: null });
    expect(stored.outbox_dead).toHaveLength(1);
    expect(stored.outbox_dead![0]).toMatchObject({ type: 'documents.invoice.send_requested', seq: 3, reason: 'too_large' });
    expect(relay.counts).toEqual({ published: 4, dead_lettered: 1 });
    expect(errors).toEqual([expect.objectContaining({ record_id: doc.record.id, type: 'documents.invoice.send_requested', reason: 'too_large', dead_letters_total: 1 })]);
    expect((await d.ctx.store.documents.get(other.record.id))!.outbox).toEqual([]);
  });

  it('sets aside an event the broker refuses for good, found by halving the batch, without reordering the rest', async () => {
    const a = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    const b = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    for (const n of [1, 2, 3]) {
      await d.documents.update(tenant, 'invoice', a.record.id, { note: `a${n}` });
      await d.documents.update(tenant, 'invoice', b.record.id, { note: `b${n}` });
    }
    const poison = (await d.ctx.store.documents.get(a.record.id))!.outbox[2];
    bus.poisoned.add(poison.id);
    while ((await relay.relayOnce()) > 0);
    const byDoc = perDocument(decoded());
    expect(byDoc.get(a.record.id)!.map((e) => e.sequence)).toEqual([1, 2, 4]);
    expect(byDoc.get(b.record.id)!.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect((await d.ctx.store.documents.get(a.record.id))!.outbox_dead).toEqual([
      expect.objectContaining({ id: poison.id, reason: 'rejected', detail: 'INVALID_RECORD' }),
    ]);
    expect(relay.counts.dead_lettered).toBe(1);
  });

  it('a broker outage is not a refusal: nothing is set aside while it is down', async () => {
    const doc = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    bus.down = true;
    await expect(relay.relayOnce()).rejects.toThrow('broker unreachable');
    expect((await d.ctx.store.documents.get(doc.record.id))!).toMatchObject({ outbox_pending: true });
    expect((await d.ctx.store.documents.get(doc.record.id))!.outbox_dead).toBeUndefined();
    bus.down = false;
    expect(await relay.relayOnce()).toBe(1);
  });

  it('events stored before they were numbered keep their written order', async () => {
    const doc = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    const stored = (await d.ctx.store.documents.get(doc.record.id))!;
    const legacy = withEvents({ ...stored, outbox: [], outbox_pending: null }, d.ctx.events.changed(stored, 'updated'));
    const { seq: _1, ...created } = stored.outbox[0];
    const { seq: _2, ...updated } = legacy.outbox[0];
    await d.ctx.store.documents.update({ ...stored, outbox: [created, updated], outbox_seq: undefined, outbox_order: undefined });
    while ((await relay.relayOnce()) > 0);
    expect(decoded().map((e) => [e.type, e.sequence])).toEqual([
      ['documents.invoice.created', 0],
      ['documents.invoice.updated', 0],
    ]);
  });
});

describe('outbox relay: settings', () => {
  it('bounds a batch at 512 KiB unless OUTBOX_BATCH_BYTES says otherwise, and refuses a bound no event fits in', () => {
    expect(DEFAULT_MAX_BATCH_BYTES).toBeLessThan(1024 * 1024); // Kafka's default message.max.bytes, with headroom
    expect(outboxRelayOptions({})).toEqual({ intervalMs: 1000, maxBatchBytes: 512 * 1024 });
    expect(outboxRelayOptions({ OUTBOX_BATCH_BYTES: '65536', OUTBOX_INTERVAL_MS: '250' })).toEqual({ intervalMs: 250, maxBatchBytes: 65536 });
    expect(() => outboxRelayOptions({ OUTBOX_BATCH_BYTES: '1000' })).toThrow('OUTBOX_BATCH_BYTES must be at least 16384');
    expect(() => outboxRelayOptions({ OUTBOX_BATCH_BYTES: '1MB' })).toThrow('non-negative integer');
  });
});
