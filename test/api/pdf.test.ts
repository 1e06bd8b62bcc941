// Spec §4 "PDF download": GET …/<documents>/<id>/pdf — the PDF itself (fields, language, marks), its
// Content-Disposition, the strong ETag and 304, scopes, 404s, the separate rate limit, and a clear 503
// when Chromium is missing. Runs against both modes.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Api, eventually } from '../support/api';
import { CZ_SUPPLIER, docsWorkspace, DocsWorkspace } from '../support/documents';
import { tokenFor } from '../support/fixtures';
import { pdfText } from '../support/pdf';
import { startSystem, System } from '../support/system';

let system: System;
let ws: DocsWorkspace;
let api: Api;
let bankId: number;

beforeAll(async () => {
  // Private: its issued and paid documents queue PDF pre-renders (≈ 1 s of Chromium each) that a shared
  // system would still be rendering while the next file runs (docs/testing.md).
  system = await startSystem({ private: true });
  ws = await docsWorkspace(system);
  api = ws.api;
  await system.cli('plan', 'set', '--workspace', String(ws.id), '--cap', 'bank_accounts=100');
  const bank = await api.post(`${ws.base}/bank_accounts`, { name: 'Fio banka', iban: 'CZ65 0800 0000 1920 0014 5399', swift: 'GIBACZPX', currency: 'czk' });
  if (bank.status !== 201) throw new Error(`bank account: ${bank.status} ${bank.text}`);
  bankId = bank.body.id;
});
afterAll(() => system?.stop());

const invoiceBody = (extra: Record<string, unknown> = {}) => ({
  purchaser_id: ws.purchaser,
  issue_date: '2026-03-05',
  delivery_date: '2026-03-04',
  due_date: '2026-03-19',
  variable_symbol: '2026031',
  bank_account_id: bankId,
  note: 'Děkujeme za spolupráci',
  line_items: [
    { name: 'Vývoj software', quantity: '10', unit: 'h', unit_price: '1250.50', vat_rate: '21' },
    { name: 'Kniha', quantity: '2', unit_price: '300', vat_rate: '12' },
  ],
  ...extra,
});

async function issued(extra: Record<string, unknown> = {}, on: DocsWorkspace = ws) {
  const created = await on.api.post(`${on.base}/invoices`, { ...invoiceBody(), purchaser_id: on.purchaser, ...extra });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  const res = await on.api.post(`${on.base}/invoices/${created.body.id}/issue`);
  if (res.status !== 200) throw new Error(`issue: ${res.status} ${res.text}`);
  return res.body;
}

const pdf = (id: number, query = '', headers: Record<string, string> = {}, on: DocsWorkspace = ws) =>
  on.api.get(`${on.base}/invoices/${id}/pdf${query}`, { headers });

describe('GET /accounts/<account_id>/invoices/<id>/pdf', () => {
  it('answers the PDF: application/pdf, attachment with the localised file name, a strong ETag', async () => {
    const inv = await issued();
    const res = await pdf(inv.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Faktura ${inv.number}.pdf"`);
    expect(res.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{16,}"$/);
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
  });

  it('prints every field of an EU invoice, in Czech (pdf_language cs) with Czech formats', async () => {
    const inv = await issued();
    const text = await pdfText((await pdf(inv.id)).bytes);
    for (const expected of [
      'Faktura',
      inv.number,
      'Dodavatel',
      CZ_SUPPLIER.name,
      'IČO: 27074358',
      'DIČ: CZ27074358',
      'Václavské náměstí 1',
      '11000 Praha',
      'Odběratel',
      'Customer a.s.',
      'Datum vystavení 5. 3. 2026',
      'Datum zdanitelného plnění 4. 3. 2026',
      'Datum splatnosti 19. 3. 2026',
      'Vývoj software',
      'Kniha',
      'Rekapitulace DPH',
      '12 505,00 CZK', // 10 × 1 250,50
      '2 626,05 CZK', // 21 % of 12 505,00
      '72,00 CZK', // 12 % of 600
      '15 803,05 CZK', // total
      'K úhradě',
      'CZ6508000000192000145399',
      'Variabilní symbol 2026031',
      'Děkujeme za spolupráci',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('KONCEPT');
  });

  it('prints in German with German formats when pdf_language is de', async () => {
    const inv = await issued({ pdf_language: 'de' });
    const res = await pdf(inv.id);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Rechnung ${inv.number}.pdf"`);
    const text = await pdfText(res.bytes);
    for (const expected of ['Rechnung', 'Lieferant', 'Kunde', 'USt-IdNr.: CZ27074358', 'Rechnungsdatum 5.3.2026', 'Fälligkeitsdatum 19.3.2026', '15.803,05 CZK', 'Zahlbetrag', 'Umsatzsteuer nach Sätzen']) {
      expect(text).toContain(expected);
    }
  });

  it('names a non-ASCII file in ASCII and as filename*=UTF-8 (RFC 6266): Slovak "Faktúra"', async () => {
    const inv = await issued({ pdf_language: 'sk' });
    const res = await pdf(inv.id);
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="Faktura ${inv.number}.pdf"; filename*=UTF-8''Fakt%C3%BAra%20${inv.number}.pdf`,
    );
    expect(await pdfText(res.bytes)).toContain('Dodávateľ');
  });

  it('?disposition=inline answers inline; any other value is an attachment', async () => {
    const inv = await issued();
    expect((await pdf(inv.id, '?disposition=inline')).headers.get('content-disposition')).toMatch(/^inline; filename="Faktura /);
    expect((await pdf(inv.id, '?disposition=INLINE')).headers.get('content-disposition')).toMatch(/^attachment; /);
    expect((await pdf(inv.id, '?disposition=bogus')).headers.get('content-disposition')).toMatch(/^attachment; /);
  });

  it('a draft carries the DRAFT mark and is named by its id; a paid invoice the PAID mark', async () => {
    const draft = await ws.api.post(`${ws.base}/invoices`, invoiceBody());
    const res = await pdf(draft.body.id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Faktura koncept-${draft.body.id}.pdf"`);
    expect(await pdfText(res.bytes)).toContain('KONCEPT');
    const inv = await issued();
    await ws.api.post(`${ws.base}/invoices/${inv.id}/mark_paid`);
    expect(await pdfText((await pdf(inv.id)).bytes)).toContain('ZAPLACENO');
  });
});

describe('PDF ETag and If-None-Match', () => {
  it('a matching If-None-Match (exact, weak form, in a list, or *) → 304 with the ETag and no body', async () => {
    const inv = await issued();
    const etag = (await pdf(inv.id)).headers.get('etag')!;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await pdf(inv.id, '', { 'if-none-match': header });
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.bytes.length).toBe(0);
    }
    const stale = await pdf(inv.id, '', { 'if-none-match': '"stale"' });
    expect(stale.status).toBe(200);
    expect(stale.headers.get('etag')).toBe(etag);
  });

  it('is stable while nothing printed changes, and changes with the document, its status, its language', async () => {
    const draft = (await ws.api.post(`${ws.base}/invoices`, invoiceBody())).body;
    const etagOf = async () => (await pdf(draft.id)).headers.get('etag')!;
    const first = await etagOf();
    expect(await etagOf()).toBe(first);
    await ws.api.patch(`${ws.base}/invoices/${draft.id}`, { note: 'Changed note' });
    const edited = await etagOf();
    expect(edited).not.toBe(first);
    await ws.api.patch(`${ws.base}/invoices/${draft.id}`, { pdf_language: 'en' });
    const english = await etagOf();
    expect(english).not.toBe(edited);
    await ws.api.post(`${ws.base}/invoices/${draft.id}/issue`);
    const exposed = await etagOf();
    expect(exposed).not.toBe(english);
    await ws.api.post(`${ws.base}/invoices/${draft.id}/mark_paid`);
    expect(await etagOf()).not.toBe(exposed);
  });

  it('changes with the workspace logo and, on a draft, with the supplier identity', async () => {
    const own = await docsWorkspace(system);
    const draft = (await own.api.post(`${own.base}/invoices`, { purchaser_id: own.purchaser, line_items: [{ name: 'A', unit_price: '10' }] })).body;
    const etagOf = async () => (await pdf(draft.id, '', {}, own)).headers.get('etag')!;
    const first = await etagOf();
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    const file = path.join(os.tmpdir(), `logo-${randomBytes(4).toString('hex')}.png`);
    writeFileSync(file, png);
    await system.cli('workspace', 'set-logo', '--workspace', String(own.id), '--file', file);
    const withLogo = await etagOf();
    expect(withLogo).not.toBe(first);
    await system.cli('workspace', 'set-legal-identity', '--workspace', String(own.id), '--data', JSON.stringify({ ...CZ_SUPPLIER, name: 'ACME Renamed s.r.o.' }));
    const renamed = await pdf(draft.id, '', {}, own);
    expect(renamed.headers.get('etag')).not.toBe(withLogo);
    expect(await pdfText(renamed.bytes)).toContain('ACME Renamed s.r.o.');
  });
});

describe('PDF ETag right after a change (kept ETags are validated, never stale)', () => {
  it('the ETag answered before an acknowledged edit, identity change or language change no longer answers 304', async () => {
    const own = await docsWorkspace(system);
    const draft = (await own.api.post(`${own.base}/invoices`, { purchaser_id: own.purchaser, line_items: [{ name: 'A', unit_price: '10' }] })).body;
    const revalidate = (etag: string) => pdf(draft.id, '', { 'if-none-match': etag }, own);
    let etag = (await pdf(draft.id, '', {}, own)).headers.get('etag')!;
    expect((await revalidate(etag)).status).toBe(304); // kept from here on
    const changes: Array<() => Promise<unknown>> = [
      () => own.api.patch(`${own.base}/invoices/${draft.id}`, { note: 'Edited' }),
      () => system.cli('workspace', 'set-legal-identity', '--workspace', String(own.id), '--data', JSON.stringify({ ...CZ_SUPPLIER, name: 'Kept Renamed s.r.o.' })),
      () => own.api.patch(`${own.base}/invoices/${draft.id}`, { pdf_language: 'de' }),
    ];
    for (const change of changes) {
      await change();
      const res = await revalidate(etag);
      expect(res.status).toBe(200);
      expect(res.headers.get('etag')).not.toBe(etag);
      etag = res.headers.get('etag')!;
      expect((await revalidate(etag)).status).toBe(304);
    }
    expect(await pdfText((await pdf(draft.id, '', {}, own)).bytes)).toContain('Kept Renamed s.r.o.');
  });

  // Own workspaces (own credentials): the shared one's PDF budget (30/min) is spent by the other tests.
  it('a deleted draft answers 404, not 304 with the ETag it had', async () => {
    const own = await docsWorkspace(system);
    const draft = (await own.api.post(`${own.base}/invoices`, { purchaser_id: own.purchaser, line_items: [{ name: 'A', unit_price: '10' }] })).body;
    const etag = (await pdf(draft.id, '', {}, own)).headers.get('etag')!;
    expect((await pdf(draft.id, '', { 'if-none-match': etag }, own)).status).toBe(304);
    expect((await own.api.delete(`${own.base}/invoices/${draft.id}`)).status).toBe(204);
    expect((await pdf(draft.id, '', { 'if-none-match': etag }, own)).status).toBe(404);
  });

  it("another workspace's request never gets a kept ETag: 404 even with the matching If-None-Match", async () => {
    const owner = await docsWorkspace(system);
    const inv = await issued({ bank_account_id: null }, owner);
    const etag = (await pdf(inv.id, '', {}, owner)).headers.get('etag')!;
    expect((await pdf(inv.id, '', { 'if-none-match': etag }, owner)).status).toBe(304);
    const other = await docsWorkspace(system);
    expect((await other.api.get(`${other.base}/invoices/${inv.id}/pdf`, { headers: { 'if-none-match': etag } })).status).toBe(404);
  });
});

describe('PDF access, errors and limits', () => {
  it('needs read:invoices (403 insufficient_scope without it)', async () => {
    const inv = await issued();
    const reader = await tokenFor(system, 'pat', ws.ownerEmail, 'read:invoices');
    expect((await api.get(`${ws.base}/invoices/${inv.id}/pdf`, { token: reader })).status).toBe(200);
    const other = await tokenFor(system, 'pat', ws.ownerEmail, 'read:contacts');
    const denied = await api.get(`${ws.base}/invoices/${inv.id}/pdf`, { token: other });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'insufficient_scope', required_scope: 'read:invoices' });
  });

  it('404 for an unknown id, an id of another document type, or another workspace\'s invoice', async () => {
    expect((await api.get(`${ws.base}/invoices/99999999/pdf`)).body.error.code).toBe('resource_not_found');
    const quote = (await api.post(`${ws.base}/quotes`, invoiceBody())).body;
    expect((await api.get(`${ws.base}/invoices/${quote.id}/pdf`)).status).toBe(404);
    const other = await docsWorkspace(system);
    const foreign = await issued({ bank_account_id: null }, other);
    expect((await api.get(`${ws.base}/invoices/${foreign.id}/pdf`)).status).toBe(404);
  });

  it('carries the PDF budget headers (30/min per credential), separate from the general budget', async () => {
    const inv = await issued();
    const res = await pdf(inv.id);
    expect(res.headers.get('x-ratelimit-limit')).toBe('30');
    const remaining = Number(res.headers.get('x-ratelimit-remaining'));
    expect(Number((await pdf(inv.id)).headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    expect((await api.get(`${ws.base}/invoices/${inv.id}`)).headers.get('x-ratelimit-limit')).not.toBe('30');
  });
});

describe('PDF routes through the gateway\'s lean lane: the same edge as every other request', () => {
  // A credential of its own per test: these requests would otherwise spend the suite's PDF budget (30/min).
  let token: string;
  beforeEach(async () => {
    token = await tokenFor(system, 'pat', ws.ownerEmail, 'read:invoices');
  });
  const raw = (suffix: string, init: RequestInit = {}) =>
    fetch(`${system.baseUrl}${suffix}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } });

  it('echoes an inbound X-Request-Id, and puts it in an error body', async () => {
    const inv = await issued();
    const mine = `req-lean-${randomBytes(6).toString('hex')}`;
    expect((await raw(`${ws.base}/invoices/${inv.id}/pdf`, { headers: { 'x-request-id': mine } })).headers.get('x-request-id')).toBe(mine);
    const missing = await api.get(`${ws.base}/invoices/99999998/pdf`, { token, headers: { 'x-request-id': mine } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.request_id).toBe(mine);
  });

  it('answers every spelling express routes alike: case, trailing slash, query string, HEAD', async () => {
    const inv = await issued();
    const route = `/api/v1/accounts/${ws.id}/invoices/${inv.id}/pdf`;
    const etag = (await raw(route)).headers.get('etag')!;
    for (const spelling of [route.toUpperCase(), `${route}/`, `${route}?disposition=inline`]) {
      const res = await raw(spelling, { headers: { 'if-none-match': etag } });
      expect({ spelling, status: res.status, etag: res.headers.get('etag') }).toEqual({ spelling, status: 304, etag });
    }
    const inline = await raw(`${route}/?disposition=inline`);
    expect(inline.headers.get('content-disposition')).toMatch(/^inline; /);
    const head = await raw(route, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('etag')).toBe(etag);
  });

  it('a parameter that is not valid percent-encoding is a 400, a non-numeric id a 404 — never a 500', async () => {
    const bad = await raw(`/api/v1/accounts/${ws.id}/invoices/%E0%A4%A/pdf`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    for (const id of ['abc', '0', '1%2F2', '99999999999999999999']) {
      const res = await raw(`/api/v1/accounts/${ws.id}/invoices/${id}/pdf`);
      expect({ id, status: res.status }).toEqual({ id, status: 404 });
    }
  });

  it('without a credential: 401, charged to the client address (X-RateLimit-* headers), with a request id', async () => {
    const inv = await issued();
    const res = await fetch(`${system.baseUrl}/api/v1/accounts/${ws.id}/invoices/${inv.id}/pdf`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('missing_credentials');
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
  });
});

describe('GET credit_notes, proformas and quotes /<id>/pdf (extension)', () => {
  it('renders each document type with its own title and scope', async () => {
    const inv = await issued();
    const created = async (segment: string, body: Record<string, unknown>) => {
      const res = await api.post(`${ws.base}/${segment}`, body);
      if (res.status !== 201) throw new Error(`${segment}: ${res.status} ${res.text}`);
      return res.body;
    };
    const note = await created('credit_notes', { purchaser_id: ws.purchaser, invoice_id: inv.id, line_items: [{ name: 'Sleva', unit_price: '100', vat_rate: '21' }] });
    expect((await api.post(`${ws.base}/credit_notes/${note.id}/issue`)).status).toBe(200);
    const proforma = await created('proformas', invoiceBody());
    const quote = await created('quotes', invoiceBody());
    for (const [segment, id, title] of [
      ['credit_notes', note.id, 'Opravný daňový doklad'],
      ['proformas', proforma.id, 'Zálohová faktura'],
      ['quotes', quote.id, 'Cenová nabídka'],
    ] as const) {
      const res = await api.get(`${ws.base}/${segment}/${id}/pdf`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.headers.get('x-ratelimit-limit')).toBe('30');
      expect(await pdfText(res.bytes)).toContain(title);
    }
  });
});

describe('PDF when the renderer is overloaded or unavailable', () => {
  let broken: System | undefined;
  let busy: System | undefined;
  afterAll(async () => {
    await broken?.stop();
    await busy?.stop();
  });

  it('a full render queue answers 503 renderer_overloaded with Retry-After at once, never 500', async () => {
    busy = await startSystem({ metrics: true, env: { RENDER_POOL_SIZE: '1', RENDER_QUEUE_MAX: '0' } });
    const own = await docsWorkspace(busy);
    const drafts = await Promise.all(
      Array.from({ length: 4 }, async (_, i) => (await own.api.post(`${own.base}/invoices`, { purchaser_id: own.purchaser, line_items: [{ name: `A${i}`, unit_price: '10' }] })).body),
    );
    await own.api.get(`${own.base}/invoices/${drafts[0].id}/pdf`); // Chromium warm
    // Its page back in the pool before the burst: on a busy machine the answer can arrive before the page
    // is released, and a burst then finds the one page taken and every request refused.
    const metricsUrl = busy.metricsUrls[busy.mode === 'embedded' ? 'embedded' : 'rendering'];
    await eventually(async () => {
      const text = await (await fetch(metricsUrl)).text();
      const gauge = (name: string) => text.split('\n').find((r) => r.startsWith(`invoicing_work_queue_${name}{queue="pdf_render"} `))?.split(' ')[1];
      expect([gauge('waiting'), gauge('running')]).toEqual(['0', '0']);
    }, 30_000);
    const answers = await Promise.all(drafts.slice(1).map((d) => own.api.get(`${own.base}/invoices/${d.id}/pdf`)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses[0]).toBe(200);
    expect(statuses).toContain(503);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
    for (const refused of answers.filter((a) => a.status === 503)) {
      expect(refused.body.error.code).toBe('renderer_overloaded');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('the system starts and a PDF request answers 503 renderer_unavailable with Retry-After', async () => {
    broken = await startSystem({ env: { CHROMIUM_PATH: '/nonexistent/chromium' } });
    const own = await docsWorkspace(broken);
    const draft = (await own.api.post(`${own.base}/invoices`, { purchaser_id: own.purchaser, line_items: [{ name: 'A', unit_price: '10' }] })).body;
    const res = await own.api.get(`${own.base}/invoices/${draft.id}/pdf`);
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('renderer_unavailable');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Everything else works.
    expect((await own.api.get(`${own.base}/invoices/${draft.id}`)).status).toBe(200);
  });
});
