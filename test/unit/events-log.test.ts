// The events log (docs/events.md): a change's event is written in the change's own commit (the outbox),
// so a crash before the relay ran loses nothing; the log stores each event once, numbers it per
// workspace and mode (strictly increasing, whatever the interleaving or crash), and lists newest first.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { ResourceSnapshot } from '../../gen/invoicing/events/v1/events';
import { documentsOutbox } from '../../services/documents/adapters/outbox-relay';
import { toDocumentMessage } from '../../services/documents/grpc/mapping';
import { consumeIntoLog } from '../../services/rendering/adapters/events-consumer';
import { eventSequencesCollection, eventsCollection } from '../../services/rendering/adapters/events-store';
import { EventsLog, EventsLogDeps, publicEventId } from '../../services/rendering/domain/events-log';
import { toTenantEvent } from '../../services/rendering/grpc/events-handlers';
import { IncomingEvent } from '../../services/rendering/ports/events';
import { MemoryEventBus } from '../../services/shared/bus/memory';
import { TOPICS } from '../../services/shared/bus/port';
import { fail } from '../../services/shared/errors';
import { fromMessage } from '../../services/shared/events';
import { createLogger } from '../../services/shared/logger';
import { OutboxRelay } from '../../services/shared/outbox/relay';
import { CursorCodec } from '../../services/shared/pagination';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { domain, line, tenant } from './documents.fixtures';

const log = createLogger('test');
log.level = 'silent';
const cursors = new CursorCodec('a-test-cursor-secret-of-length');
const NO_FILTERS = { type: '', created_at_gte: '', created_at_gt: '', created_at_lte: '', created_at_lt: '' };

function eventsLog(store = new SqliteDocumentStore(path.join(mkdtempSync(path.join(os.tmpdir(), 'events-log-')), 'test.db')), extra: Partial<EventsLogDeps> = {}) {
  let t = Date.parse('2026-11-28T10:00:00.000Z');
  const deps: EventsLogDeps = {
    events: eventsCollection(store),
    sequences: eventSequencesCollection(store),
    nextId: () => store.nextId('tenant_events'),
    // Every event a millisecond after the last: created_at order is storage order.
    clock: { now: () => new Date(t++) },
    ...extra,
  };
  return { log: new EventsLog(deps), store, deps };
}

const OBJECT = Buffer.from(ResourceSnapshot.encode({ contact: { id: 1, name: 'x', invoice_account_id: 1, suspended: false, created_at: '', updated_at: '' } }).finish()).toString('base64');
const incoming = (type = 'contacts.contact.updated', t = tenant): IncomingEvent => ({ id: randomUUID(), type, account_id: t.account_id, livemode: t.livemode, object: OBJECT });

/** A message queue that can hold a delivery until released: the interleavings of two consumers. */
function latch() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { gate, release };
}

describe('events are written in the same commit as their change', () => {
  it('a crash before the relay ran (no relay at all) loses nothing: a relay started later publishes it, and the log stores the resource as the change left it', async () => {
    const d = domain();
    // The change commits; the process "dies" before any relay publishes (none was started).
    const created = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    const issued = await d.lifecycle.issue(tenant, 'invoice', created.record.id);
    const stored = (await d.ctx.store.documents.get(created.record.id))!;
    expect(stored.outbox.map((e) => e.type)).toEqual(['documents.invoice.created', 'documents.invoice.issued']);
    // A new process: its relay publishes what the commits left, the log consumes it.
    const bus = new MemoryEventBus();
    const { log: events } = eventsLog();
    const both = latch();
    let storedCount = 0;
    const subscriptions = await consumeIntoLog(bus, events, () => {
      if (++storedCount === 2) both.release();
    });
    const relay = new OutboxRelay([documentsOutbox(d.ctx.store.documents, (doc) => d.ctx.view(doc))], bus, log, { intervalMs: 20 });
    await relay.relayOnce();
    await both.gate;
    const page = await events.list(tenant, NO_FILTERS, undefined, cursors);
    expect(page.items.map((e) => e.type)).toEqual(['invoice.issued', 'invoice.created']);
    // data.object of the issued event is exactly what GetDocument answered right after the issue.
    expect(toTenantEvent(page.items[0]).object).toEqual({ document: toDocumentMessage(issued) });
    expect(toTenantEvent(page.items[0]).object?.document?.status).toBe('exposed');
    // The created event shows the draft, not the document's later state.
    expect(toTenantEvent(page.items[1]).object?.document).toMatchObject({ status: 'draft', number: undefined });
    await relay.stop();
    for (const s of subscriptions) await s.close();
  });

  it('a resource the service refuses to map (a DomainError) does not block the events behind it: that one goes out without it', async () => {
    const d = domain();
    const first = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    const second = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    const bus = new MemoryEventBus();
    const published: Array<{ type: string; document?: number }> = [];
    const all = latch();
    await bus.subscribe(TOPICS.documents, { group: 'test', fromBeginning: true }, async (m) => {
      const event = fromMessage(m);
      published.push({ type: event.type, document: event.resource?.document?.id });
      if (published.length === 2) all.release();
    });
    const source = documentsOutbox(d.ctx.store.documents, async (doc) => {
      if (doc.id === first.record.id) throw fail.notFound('purchaser');
      return d.ctx.view(doc);
    });
    const relay = new OutboxRelay([source], bus, log, { intervalMs: 20 });
    await relay.relayOnce();
    await all.gate;
    expect(published.sort((a, b) => (a.document ?? 0) - (b.document ?? 0))).toEqual([
      { type: 'documents.invoice.created', document: undefined },
      { type: 'documents.invoice.created', document: second.record.id },
    ]);
    expect((await d.ctx.store.documents.get(first.record.id))!.outbox).toEqual([]);
    await relay.stop();
  });

  it('a change that is refused writes no event', async () => {
    const d = domain();
    const created = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    await expect(d.lifecycle.markPaid(tenant, created.record.id)).rejects.toBeDefined(); // a draft cannot be paid
    expect((await d.ctx.store.documents.get(created.record.id))!.outbox.map((e) => e.type)).toEqual(['documents.invoice.created']);
  });
});

describe('the log stores each event once', () => {
  it('a redelivered event (same outbox id) is stored once, with its first number', async () => {
    const { log: events } = eventsLog();
    const event = incoming();
    const first = await events.record(event);
    const again = await events.record(event);
    expect(again!.id).toBe(first!.id);
    expect(again!.sequence).toBe(first!.sequence);
    expect((await events.list(tenant, NO_FILTERS, undefined, cursors)).items).toHaveLength(1);
  });

  it('two consumers racing on one event (held between numbering and storing) store it once', async () => {
    const hold = latch();
    let arrived = 0;
    const both = latch();
    const { log: events } = eventsLog(undefined, {
      beforeStore: async () => {
        if (++arrived === 2) both.release();
        await hold.gate;
      },
    });
    const event = incoming();
    const racing = [events.record(event), events.record(event)];
    await both.gate;
    hold.release();
    const [a, b] = await Promise.all(racing);
    expect(a!.event_id).toBe(b!.event_id);
    expect((await events.list(tenant, NO_FILTERS, undefined, cursors)).items).toHaveLength(1);
  });

  it('a crash between numbering and storing skips a number, never repeats one: the redelivery is stored with the next', async () => {
    let crash = true;
    const { log: events } = eventsLog(undefined, {
      beforeStore: async () => {
        if (crash) throw new Error('process killed');
      },
    });
    const event = incoming();
    await expect(events.record(event)).rejects.toThrow('process killed');
    crash = false;
    const stored = await events.record(event);
    expect(stored!.sequence).toBe(2);
    expect(stored!.event_id).toBe(publicEventId(event.id));
  });

  it('keeps only the events tenants see: a known type that carries its resource', async () => {
    const { log: events } = eventsLog();
    expect(await events.record(incoming('expenses.extraction.requested'))).toBeNull();
    expect(await events.record({ ...incoming('documents.invoice.paid'), object: undefined })).toBeNull();
    expect(await events.record(incoming('documents.quote.converted'))).toBeNull();
    expect((await events.record(incoming('documents.invoice.send_requested')))!.type).toBe('invoice.sent');
    expect((await events.record(incoming('documents.invoice.email_failed')))!.type).toBe('email.failed');
  });
});

describe('sequence: strictly increasing per workspace and mode', () => {
  it('created_at grows with the sequence even when the clock goes back (another replica, the same millisecond)', async () => {
    const times = ['2026-11-28T10:00:00.500Z', '2026-11-28T10:00:00.200Z', '2026-11-28T10:00:00.500Z', '2026-11-28T10:00:01.000Z'];
    let i = 0;
    const { log: events } = eventsLog(undefined, { clock: { now: () => new Date(times[i++]) } });
    for (let n = 0; n < times.length; n++) await events.record(incoming());
    const listed = (await events.list(tenant, NO_FILTERS, undefined, cursors)).items;
    expect(listed.map((e) => [e.sequence, e.created_at])).toEqual([
      [4, '2026-11-28T10:00:01.000Z'],
      [3, '2026-11-28T10:00:00.502Z'],
      [2, '2026-11-28T10:00:00.501Z'],
      [1, '2026-11-28T10:00:00.500Z'],
    ]);
  });

  it('numbers each workspace and mode on its own, in storage order, also when stored concurrently', async () => {
    const { log: events } = eventsLog();
    const test = { ...tenant, livemode: false };
    const other = { account_id: tenant.account_id + 1, livemode: true };
    await Promise.all([...Array.from({ length: 12 }, () => events.record(incoming())), ...Array.from({ length: 5 }, () => events.record(incoming(undefined, test))), events.record(incoming(undefined, other))]);
    // Listed newest first by created_at, which is newest first by number: 12, 11, … 1.
    const live = (await events.list(tenant, NO_FILTERS, { page_size: 100 }, cursors)).items.map((e) => e.sequence);
    expect(live).toEqual(Array.from({ length: 12 }, (_, i) => 12 - i));
    expect((await events.list(test, NO_FILTERS, { page_size: 100 }, cursors)).items.map((e) => e.sequence)).toEqual([5, 4, 3, 2, 1]);
    expect((await events.list(other, NO_FILTERS, undefined, cursors)).items.map((e) => e.sequence)).toEqual([1]);
  });
});

describe('listing', () => {
  it('newest first; type exact or a prefix ending in a dot; created_at bounds; keyset pages bound to the filters', async () => {
    const { log: events } = eventsLog();
    for (const type of ['contacts.contact.created', 'documents.invoice.created', 'documents.invoice.paid', 'contacts.contact.updated', 'documents.invoice.updated']) await events.record(incoming(type));
    const all = (await events.list(tenant, NO_FILTERS, undefined, cursors)).items;
    expect(all.map((e) => e.type)).toEqual(['invoice.updated', 'contact.updated', 'invoice.paid', 'invoice.created', 'contact.created']);
    expect((await events.list(tenant, { ...NO_FILTERS, type: 'invoice.' }, undefined, cursors)).items.map((e) => e.type)).toEqual(['invoice.updated', 'invoice.paid', 'invoice.created']);
    expect((await events.list(tenant, { ...NO_FILTERS, type: 'invoice.paid' }, undefined, cursors)).items.map((e) => e.type)).toEqual(['invoice.paid']);
    const [t0, t1, t2, t3] = [...all].reverse().map((e) => e.created_at);
    const ranged = await events.list(tenant, { ...NO_FILTERS, created_at_gte: t1, created_at_lt: t3 }, undefined, cursors);
    expect(ranged.items.map((e) => e.created_at)).toEqual([t2, t1]);
    expect((await events.list(tenant, { ...NO_FILTERS, created_at_gt: t0, created_at_lte: t1 }, undefined, cursors)).items.map((e) => e.created_at)).toEqual([t1]);
    // Pages of two walk the whole list once.
    const seen: string[] = [];
    let token = '';
    do {
      const page = await events.list(tenant, NO_FILTERS, { page_size: 2, page_token: token }, cursors);
      seen.push(...page.items.map((e) => e.event_id));
      token = page.page_info.next_page_token;
    } while (token);
    expect(seen).toEqual(all.map((e) => e.event_id));
    // A cursor is bound to its filters.
    const first = await events.list(tenant, NO_FILTERS, { page_size: 1 }, cursors);
    await expect(events.list(tenant, { ...NO_FILTERS, type: 'invoice.' }, { page_token: first.page_info.next_page_token }, cursors)).rejects.toMatchObject({ code: 'invalid_cursor' });
  });

  it.each([['invoice'], ['Invoice.paid'], ['invoice..'], ['*'], ['invoice.paid.x']])('422 invalid_event_type for type %j', async (type) => {
    const { log: events } = eventsLog();
    await expect(events.list(tenant, { ...NO_FILTERS, type }, undefined, cursors)).rejects.toMatchObject({ code: 'invalid_event_type' });
  });

  it.each([['yesterday'], ['2026-11-28'], ['2026-11-28T10:00:00'], ['2026-13-28T10:00:00Z']])('422 invalid_timestamp for created_at bound %j', async (value) => {
    const { log: events } = eventsLog();
    await expect(events.list(tenant, { ...NO_FILTERS, created_at_gte: value }, undefined, cursors)).rejects.toMatchObject({ code: 'invalid_timestamp' });
  });

  it('another workspace’s or mode’s event is not found', async () => {
    const { log: events } = eventsLog();
    const stored = await events.record(incoming());
    await expect(events.get({ ...tenant, livemode: false }, stored!.event_id)).rejects.toMatchObject({ code: 'resource_not_found' });
    await expect(events.get({ account_id: 99, livemode: true }, stored!.event_id)).rejects.toMatchObject({ code: 'resource_not_found' });
    expect((await events.get(tenant, stored!.event_id)).id).toBe(stored!.id);
  });
});
