// Issue #19, the events API: every change a tenant cares about is an event whose data.object is the
// resource exactly as its GET answered right after the change — however the change was made (an API
// call, a conversion, the mail or extraction worker) — numbered per workspace and mode, listed newest
// first with keyset pages, a type (or prefix) filter and created_at bounds; isolated by workspace and
// by mode; read:events required.
import { Api, ApiResponse, eventually } from '../support/api';
import { imageFile, pdfFile } from '../support/expense-files';
import { createWorkspace, tokenFor } from '../support/fixtures';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { startSystem, System } from '../support/system';

let system: System;
let ws: DocsWorkspace;
let api: Api;

beforeAll(async () => {
  // Private: its issued and paid documents queue PDF pre-renders and its uploads extraction jobs that a
  // shared system would still be working on when the next file runs (docs/testing.md).
  system = await startSystem({ private: true, env: { MAIL_POLL_MS: '100', EXTRACTION_POLL_MS: '300', RATE_LIMIT_GENERAL: '1000000' } });
  ws = await docsWorkspace(system);
  api = ws.api;
});
afterAll(() => system?.stop());

type Event = { id: string; type: string; created_at: string; mode: string; sequence: number; data: { object: Record<string, unknown> & { id: number } } };

const ok = (res: ApiResponse, status = 200) => {
  if (res.status !== status) throw new Error(`${res.status} ${res.text}`);
  return res.body;
};

/** The newest event of `type` about resource `id` (it travels over the bus: polled with a bound). */
const eventOf = (type: string, id: number, on: Api = api, base = ws.base): Promise<Event> =>
  eventually(async () => {
    const page = ok(await on.get(`${base}/events?type=${type}&limit=100`));
    const found = (page.data as Event[]).find((e) => e.data.object.id === id);
    expect(found).toBeDefined();
    return found!;
  }, 60_000);

/** The change's event carries exactly what a GET answered right after it. */
async function expectEventIsGet(type: string, path: string): Promise<Event> {
  const got = ok(await api.get(`${ws.base}/${path}`));
  const event = await eventOf(type, got.id);
  expect(event.data.object).toEqual(got);
  return event;
}

async function expectDeletedEvent(type: string, path: string) {
  const before = ok(await api.get(`${ws.base}/${path}`));
  expect((await api.delete(`${ws.base}/${path}`)).status).toBe(204);
  const event = await eventOf(type, before.id);
  // As it was when deleted: the last GET's fields, with deleted set (and the time of the deletion).
  expect(event.data.object).toEqual({ ...before, deleted: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), updated_at: expect.any(String) });
}

const create = async (segment: string, body: Record<string, unknown> = {}) => ok(await api.post(`${ws.base}/${segment}`, { purchaser_id: ws.purchaser, line_items: [line()], ...body }), 201);
const post = async (path: string, body?: unknown) => ok(await api.post(`${ws.base}/${path}`, body));

describe('GET /accounts/<account_id>/events — data.object is the resource as its GET answered right after the change', () => {
  it('invoices: created, updated, issued, sent, email.delivered (the mail worker), paid, deleted', async () => {
    const invoice = await create('invoices');
    await expectEventIsGet('invoice.created', `invoices/${invoice.id}`);
    await api.patch(`${ws.base}/invoices/${invoice.id}`, { note: 'Thanks' });
    await expectEventIsGet('invoice.updated', `invoices/${invoice.id}`);
    await post(`invoices/${invoice.id}/issue`);
    const issued = await expectEventIsGet('invoice.issued', `invoices/${invoice.id}`);
    expect(issued.data.object).toMatchObject({ status: 'exposed', number: expect.any(String) });
    // The send's answer is the invoice as the send left it (its GET may already show the delivery's outcome).
    const sent = await post(`invoices/${invoice.id}/send`);
    expect((await eventOf('invoice.sent', invoice.id)).data.object).toEqual(sent);
    const delivered = await eventually(async () => {
      const got = ok(await api.get(`${ws.base}/invoices/${invoice.id}`));
      expect(got.email_status).toBe('sent');
      return got;
    }, 60_000);
    expect((await eventOf('email.delivered', invoice.id)).data.object).toEqual(delivered);
    await post(`invoices/${invoice.id}/mark_paid`);
    await expectEventIsGet('invoice.paid', `invoices/${invoice.id}`);
    const draft = await create('invoices');
    await expectDeletedEvent('invoice.deleted', `invoices/${draft.id}`);
  });

  it('credit notes: created, issued', async () => {
    const invoice = await create('invoices');
    await post(`invoices/${invoice.id}/issue`);
    const note = await create('credit_notes', { invoice_id: invoice.id, line_items: [line('10', '21', '1')] });
    await expectEventIsGet('credit_note.created', `credit_notes/${note.id}`);
    await post(`credit_notes/${note.id}/issue`);
    await expectEventIsGet('credit_note.issued', `credit_notes/${note.id}`);
  });

  it('proformas: created, issued, paid, converted — and the conversion’s invoice has its own events', async () => {
    const proforma = await create('proformas');
    await expectEventIsGet('proforma.created', `proformas/${proforma.id}`);
    await post(`proformas/${proforma.id}/issue`);
    await expectEventIsGet('proforma.issued', `proformas/${proforma.id}`);
    await post(`proformas/${proforma.id}/mark_paid`);
    await expectEventIsGet('proforma.paid', `proformas/${proforma.id}`);
    const invoice = ok(await api.post(`${ws.base}/proformas/${proforma.id}/convert_to_invoice`), 201);
    await expectEventIsGet('proforma.converted', `proformas/${proforma.id}`);
    // Made by the conversion, not by an API call on it: the same events an API call makes.
    await expectEventIsGet('invoice.paid', `invoices/${invoice.id}`);
    expect((await eventOf('invoice.created', invoice.id)).data.object).toMatchObject({ id: invoice.id, status: 'draft' });
  });

  it('quotes: created, accepted', async () => {
    const quote = await create('quotes');
    await expectEventIsGet('quote.created', `quotes/${quote.id}`);
    await post(`quotes/${quote.id}/accept`);
    await expectEventIsGet('quote.accepted', `quotes/${quote.id}`);
  });

  it('contacts: created, updated, deleted', async () => {
    const contact = ok(await api.post(`${ws.base}/contacts`, { name: 'Events Customer', invoice_account: { name: 'Events Customer s.r.o.' } }), 201);
    await expectEventIsGet('contact.created', `contacts/${contact.id}`);
    ok(await api.patch(`${ws.base}/contacts/${contact.id}`, { name: 'Events Customer (HQ)' }));
    const updated = await expectEventIsGet('contact.updated', `contacts/${contact.id}`);
    expect(updated.data.object.name).toBe('Events Customer (HQ)');
    await expectDeletedEvent('contact.deleted', `contacts/${contact.id}`);
  });

  it('bank accounts: created, updated, deleted', async () => {
    const account = ok(await api.post(`${ws.base}/bank_accounts`, { name: 'Events', iban: 'CZ6508000000192000145399' }), 201);
    await expectEventIsGet('bank_account.created', `bank_accounts/${account.id}`);
    ok(await api.patch(`${ws.base}/bank_accounts/${account.id}`, { name: 'Events (main)' }));
    await expectEventIsGet('bank_account.updated', `bank_accounts/${account.id}`);
    const before = ok(await api.get(`${ws.base}/bank_accounts/${account.id}`));
    expect((await api.delete(`${ws.base}/bank_accounts/${account.id}`)).status).toBe(204);
    // A deleted bank account stays readable by id: the event is its GET after the deletion.
    const after = ok(await api.get(`${ws.base}/bank_accounts/${account.id}`));
    expect(after.deleted).toEqual(expect.any(String));
    expect((await eventOf('bank_account.deleted', before.id)).data.object).toEqual(after);
  });

  it('expenses: created, updated, deleted; an upload’s extraction_completed and extraction_failed (the extraction worker)', async () => {
    const expense = ok(await api.post(`${ws.base}/expenses`, { expense: { currency: 'CZK', expense_items_attributes: [{ name: 'Paper', unit_price: '10', vat_rate: '21' }] } }), 201);
    await expectEventIsGet('expense.created', `expenses/${expense.id}`);
    ok(await api.patch(`${ws.base}/expenses/${expense.id}`, { expense: { note: 'office' } }));
    await expectEventIsGet('expense.updated', `expenses/${expense.id}`);
    await expectDeletedEvent('expense.deleted', `expenses/${expense.id}`);

    const upload = async (file: Buffer, type: string, name: string) => {
      const form = new FormData();
      form.append('file', new Blob([file], { type }), name);
      return ok(await api.request('POST', `${ws.base}/expenses/upload`, { rawBody: form }), 201);
    };
    const settled = (id: number, status: string) =>
      eventually(async () => {
        const got = ok(await api.get(`${ws.base}/expenses/${id}`));
        expect(got.extraction_status).toBe(status);
        return got;
      }, 120_000);
    // A receipt reads; a photo of noise does not (unreadable).
    const [good, bad] = await Promise.all([upload(await pdfFile(), 'application/pdf', 'receipt.pdf'), upload(await imageFile('png', 256), 'image/png', 'noise.png')]);
    expect((await eventOf('expense.created', good.id)).data.object).toEqual(good);
    expect((await eventOf('expense.extraction_completed', good.id)).data.object).toEqual(await settled(good.id, 'completed'));
    expect((await eventOf('expense.extraction_failed', bad.id)).data.object).toEqual(await settled(bad.id, 'failed'));
  });
});

describe('GET /accounts/<account_id>/events — order, sequence, filters, pages', () => {
  let all: Event[];
  /** Up to the newest event when the list was read: events recorded later (workers finishing) stay out. */
  let upTo: string;

  beforeAll(async () => {
    const contact = ok(await api.post(`${ws.base}/contacts`, { name: 'Last', invoice_account: { name: 'Last Ltd' } }), 201);
    const last = await eventOf('contact.created', contact.id);
    upTo = `created_at[lte]=${encodeURIComponent(last.created_at)}`;
    all = [];
    let cursor = '';
    do {
      const page = ok(await api.get(`${ws.base}/events?limit=100&${upTo}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
      all.push(...page.data);
      cursor = page.next_cursor ?? '';
    } while (cursor);
  });

  it('newest first; sequence grows strictly per workspace and mode (newest first by time is newest first by number)', () => {
    expect(all.length).toBeGreaterThan(10);
    for (let i = 1; i < all.length; i++) {
      expect(all[i].sequence).toBeLessThan(all[i - 1].sequence);
      expect(all[i].created_at < all[i - 1].created_at).toBe(true);
    }
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    expect(all.every((e) => e.mode === 'live' && /^evt_[0-9a-f]{32}$/.test(e.id))).toBe(true);
  });

  it('pages of 3 walk the list without skipping or repeating', async () => {
    const seen: string[] = [];
    let cursor = '';
    do {
      const page = ok(await api.get(`${ws.base}/events?limit=3&${upTo}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
      expect(page.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.data.map((e: Event) => e.id));
      cursor = page.next_cursor ?? '';
    } while (cursor && seen.length < all.length + 3);
    expect(seen).toEqual(all.map((e) => e.id));
  });

  it('type: one type, or a prefix ending in a dot; anything else 422 invalid_event_type', async () => {
    const prefixed = ok(await api.get(`${ws.base}/events?type=invoice.&limit=100&${upTo}`)).data as Event[];
    expect(prefixed.map((e) => e.id)).toEqual(all.filter((e) => e.type.startsWith('invoice.')).map((e) => e.id));
    const exact = ok(await api.get(`${ws.base}/events?type=quote.accepted`)).data as Event[];
    expect(exact.map((e) => e.type)).toEqual(['quote.accepted']);
    const bad = await api.get(`${ws.base}/events?type=invoice`);
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('invalid_event_type');
  });

  it('created_at[gte] / [lt] bound the list; a malformed bound → 422 invalid_timestamp', async () => {
    const newer = all[2].created_at;
    const older = all[all.length - 3].created_at;
    const ranged = ok(await api.get(`${ws.base}/events?limit=100&created_at[gte]=${encodeURIComponent(older)}&created_at[lt]=${encodeURIComponent(newer)}`)).data as Event[];
    expect(ranged.map((e) => e.id)).toEqual(all.filter((e) => e.created_at >= older && e.created_at < newer).map((e) => e.id));
    const bad = await api.get(`${ws.base}/events?created_at[gte]=yesterday`);
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('invalid_timestamp');
  });

  it('a forged cursor, or one reused with other filters → 422 invalid_cursor', async () => {
    const forged = await api.get(`${ws.base}/events?cursor=${Buffer.from(JSON.stringify({ a: ['9999', 1], f: 'x' })).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`);
    expect(forged.status).toBe(422);
    expect(forged.body.error.code).toBe('invalid_cursor');
    const first = ok(await api.get(`${ws.base}/events?limit=1`));
    const reused = await api.get(`${ws.base}/events?type=invoice.&cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('invalid_cursor');
  });

  it('GET /events/<id> reads one event as listed', async () => {
    expect(ok(await api.get(`${ws.base}/events/${all[0].id}`))).toEqual(all[0]);
    expect((await api.get(`${ws.base}/events/evt_${'0'.repeat(32)}`)).status).toBe(404);
    expect((await api.get(`${ws.base}/events/42`)).status).toBe(404);
  });
});

describe('isolation', () => {
  it('test mode: a test credential’s changes are test events, numbered on their own, seen only with a test credential', async () => {
    const testToken = await tokenFor(system, 'test', ws.id, 'all');
    const test = new Api(system.baseUrl, testToken);
    const contact = ok(await test.post(`${ws.base}/contacts`, { name: 'Sandbox', invoice_account: { name: 'Sandbox Ltd' } }), 201);
    const event = await eventOf('contact.created', contact.id, test);
    expect(event.mode).toBe('test');
    expect(event.data.object).toEqual(ok(await test.get(`${ws.base}/contacts/${contact.id}`)));
    const testEvents = ok(await test.get(`${ws.base}/events?limit=100`)).data as Event[];
    expect(testEvents.every((e) => e.mode === 'test')).toBe(true);
    expect(Math.min(...testEvents.map((e) => e.sequence))).toBe(1);
    // Neither mode reads the other's events.
    expect((await api.get(`${ws.base}/events/${event.id}`)).status).toBe(404);
    const live = ok(await api.get(`${ws.base}/events?limit=1`)).data[0] as Event;
    expect((await test.get(`${ws.base}/events/${live.id}`)).status).toBe(404);
    expect(ok(await api.get(`${ws.base}/events?type=contact.&limit=100`)).data.some((e: Event) => e.id === event.id)).toBe(false);
  });

  it('another workspace’s event → 404', async () => {
    const other = await createWorkspace(system, 'Other s.r.o.');
    const otherApi = new Api(system.baseUrl, other.pat);
    const mine = ok(await api.get(`${ws.base}/events?limit=1`)).data[0] as Event;
    const res = await otherApi.get(`/api/v1/accounts/${other.id}/events/${mine.id}`);
    expect(res.status).toBe(404);
    expect(ok(await otherApi.get(`/api/v1/accounts/${other.id}/events`)).data).toEqual([]);
  });

  it('a credential without read:events → 403 insufficient_scope', async () => {
    const token = await tokenFor(system, 'live', ws.id, 'read:invoices,read:contacts');
    const res = await new Api(system.baseUrl, token).get(`${ws.base}/events`);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    const withScope = await new Api(system.baseUrl, await tokenFor(system, 'live', ws.id, 'read:events')).get(`${ws.base}/events?limit=1`);
    expect(withScope.status).toBe(200);
  });
});
