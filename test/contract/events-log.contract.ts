// The events log (services/rendering/domain/events-log.ts) over every store adapter: its queries — a
// per-workspace counter (compare-and-set), a unique event id, and newest-first keyset pages on a
// text timestamp with equality filters — behave the same on SQLite and on MongoDB (FerretDB).
import { randomInt, randomUUID } from 'node:crypto';
import { ResourceSnapshot } from '../../gen/invoicing/events/v1/events';
import { eventSequencesCollection, eventsCollection } from '../../services/rendering/adapters/events-store';
import { EventsLog } from '../../services/rendering/domain/events-log';
import { IncomingEvent } from '../../services/rendering/ports/events';
import { CursorCodec } from '../../services/shared/pagination';
import { DocumentStore } from '../../services/shared/store/port';
import { Tenant } from '../../services/shared/tenant';

const cursors = new CursorCodec('a-test-cursor-secret-of-length');
const NO_FILTERS = { type: '', created_at_gte: '', created_at_gt: '', created_at_lte: '', created_at_lt: '' };
const OBJECT = Buffer.from(ResourceSnapshot.encode({ bank_account: { id: 1, name: 'x', created_at: '', updated_at: '', account_type: 1 } }).finish()).toString('base64');

export function describeEventsLogContract(name: string, open: () => Promise<DocumentStore>) {
  describe(`events log (${name})`, () => {
    let store: DocumentStore;
    let events: EventsLog;
    let t = Date.parse('2026-11-28T10:00:00.000Z');
    // Workspaces of their own per run: the real engines' database outlives a run.
    const tenant: Tenant = { account_id: randomInt(1, 2 ** 40), livemode: true };
    const incoming = (type: string, who: Tenant = tenant): IncomingEvent => ({ id: randomUUID(), type, account_id: who.account_id, livemode: who.livemode, object: OBJECT });

    beforeAll(async () => {
      store = await open();
      events = new EventsLog({
        events: eventsCollection(store),
        sequences: eventSequencesCollection(store),
        nextId: () => store.nextId('tenant_events'),
        clock: { now: () => new Date(t++) },
      });
    });
    afterAll(() => store?.close());

    it('numbers concurrent events of a workspace and mode 1, 2, … with no repeat, each mode on its own, each event once', async () => {
      const test = { ...tenant, livemode: false };
      const redelivered = incoming('contacts.bank_account.created');
      await Promise.all([
        ...Array.from({ length: 10 }, () => events.record(incoming('contacts.bank_account.updated'))),
        ...Array.from({ length: 3 }, () => events.record(incoming('contacts.bank_account.updated', test))),
        events.record(redelivered),
        events.record(redelivered),
      ]);
      const live = (await events.list(tenant, NO_FILTERS, { page_size: 100 }, cursors)).items;
      expect(live.filter((e) => e.type === 'bank_account.created')).toHaveLength(1);
      // Newest first by created_at is newest first by number, strictly; the redelivery racing its first
      // delivery may have taken a number it then did not store (a skip, never a repeat).
      const numbers = live.map((e) => e.sequence);
      expect(numbers).toHaveLength(11);
      for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBeLessThan(numbers[i - 1]);
      expect(numbers[numbers.length - 1]).toBe(1);
      expect(numbers[0]).toBeLessThanOrEqual(12);
      expect((await events.list(test, NO_FILTERS, { page_size: 100 }, cursors)).items.map((e) => e.sequence)).toEqual([3, 2, 1]);
    });

    it('lists newest first by created_at, filters by type and by prefix, and pages without skipping or repeating', async () => {
      const other: Tenant = { account_id: tenant.account_id + 1, livemode: true };
      for (const type of ['documents.invoice.created', 'contacts.contact.created', 'documents.invoice.paid', 'documents.invoice.updated']) {
        await events.record(incoming(type, other));
      }
      const all = (await events.list(other, NO_FILTERS, undefined, cursors)).items;
      expect(all.map((e) => e.type)).toEqual(['invoice.updated', 'invoice.paid', 'contact.created', 'invoice.created']);
      expect(all.map((e) => e.sequence)).toEqual([4, 3, 2, 1]);
      expect((await events.list(other, { ...NO_FILTERS, type: 'invoice.' }, undefined, cursors)).items.map((e) => e.type)).toEqual(['invoice.updated', 'invoice.paid', 'invoice.created']);
      expect((await events.list(other, { ...NO_FILTERS, type: 'contact.created' }, undefined, cursors)).items).toHaveLength(1);
      const seen: number[] = [];
      let token = '';
      do {
        const page = await events.list(other, { ...NO_FILTERS, type: 'invoice.' }, { page_size: 2, page_token: token }, cursors);
        seen.push(...page.items.map((e) => e.sequence));
        token = page.page_info.next_page_token;
      } while (token);
      expect(seen).toEqual([4, 3, 1]);
      const [oldest, , third] = [...all].reverse();
      expect((await events.list(other, { ...NO_FILTERS, created_at_gt: oldest.created_at, created_at_lte: third.created_at }, undefined, cursors)).items.map((e) => e.sequence)).toEqual([3, 2]);
    });
  });
}
