// The PDF use case (docs/rendering.md): the ETag is a function of everything printed; a matching
// If-None-Match answers without rendering or reading storage; a stored PDF is never rendered again;
// concurrent requests share one render; the view is localised with the locale's formats.
import { Pdfs } from '../../services/rendering/domain/pdfs';
import { pdfView } from '../../services/rendering/domain/pdf-view';
import { etagOf, fileName, matchesIfNoneMatch, renderInput } from '../../services/rendering/domain/render-input';
import { DocumentSource, PrintableDocument, Workspace } from '../../services/rendering/ports/document-source';
import { DocumentTemplate, PdfView } from '../../services/rendering/ports/document-template';
import { printable, workspace } from './rendering.fixtures';

const tenant = { account_id: 7, livemode: true };
const etag = (doc: PrintableDocument = printable(), ws: Workspace = workspace(), version = 't1', t = tenant) => etagOf(renderInput(t, doc, ws, version));

describe('PDF ETag', () => {
  it('is strong, quoted and stable for the same input', () => {
    expect(etag()).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(etag()).toBe(etag());
  });

  it.each([
    ['the document content', { doc: printable({ note: 'new' }) }],
    ['the document revision (updated_at)', { doc: printable({ updated_at: '2026-03-06T00:00:00.000Z' }) }],
    ['the status (PAID mark)', { doc: printable({ status: 'paid' }) }],
    ['the language', { doc: printable({ pdf_language: 'de' }) }],
    ['the logo', { ws: workspace({ logo_key: 'logos/7/abc.png' }) }],
    ['the template version', { version: 't2' }],
    ['the tenant (sandbox vs live)', { t: { account_id: 7, livemode: false } }],
  ])('changes with %s', (_what, change: { doc?: PrintableDocument; ws?: Workspace; version?: string; t?: typeof tenant }) => {
    expect(etag(change.doc, change.ws, change.version, change.t)).not.toBe(etag());
  });

  it('a draft follows the live supplier identity; an issued document keeps its snapshot', () => {
    const renamed = workspace({ identity: { ...workspace().identity, name: 'Renamed s.r.o.' } });
    expect(etag(printable({ status: 'draft' }), renamed)).not.toBe(etag(printable({ status: 'draft' })));
    expect(etag(printable({ status: 'exposed' }), renamed)).toBe(etag(printable({ status: 'exposed' })));
  });

  it('If-None-Match: exact, weak (W/), in a list, or *; nothing else', () => {
    const tag = '"abc"';
    expect(matchesIfNoneMatch('"abc"', tag)).toBe(true);
    expect(matchesIfNoneMatch('W/"abc"', tag)).toBe(true);
    expect(matchesIfNoneMatch('"x", "abc"', tag)).toBe(true);
    expect(matchesIfNoneMatch('*', tag)).toBe(true);
    expect(matchesIfNoneMatch('', tag)).toBe(false);
    expect(matchesIfNoneMatch('abc', tag)).toBe(false);
    expect(matchesIfNoneMatch('"abcd"', tag)).toBe(false);
  });

  it('file names: localised title and number, a draft by id, unsafe characters replaced', () => {
    expect(fileName(printable(), 'sk')).toBe('Faktúra 2026000007.pdf');
    expect(fileName(printable({ number: null, status: 'draft' }), 'de')).toBe('Rechnung entwurf-42.pdf');
    expect(fileName(printable({ number: 'FA/2026:7' }), 'en')).toBe('Invoice FA-2026-7.pdf');
  });
});

describe('PDF view', () => {
  const view = (doc: PrintableDocument, language: 'en' | 'cs' | 'sk' | 'de') => pdfView({ doc, supplier: doc.supplier, language, qr: null, logo_data_uri: null });

  it('Czech: labels, cs-CZ dates and money, credits applied and amount due', () => {
    const v = view(printable(), 'cs');
    expect(v.title).toBe('Faktura');
    expect(v.dates).toEqual([
      { label: 'Datum vystavení', value: '5. 3. 2026' },
      { label: 'Datum zdanitelného plnění', value: '4. 3. 2026' },
      { label: 'Datum splatnosti', value: '19. 3. 2026' },
    ]);
    expect(v.totals.map((t) => `${t.label}: ${t.value.replace(/\s/g, ' ')}`)).toEqual([
      'Celkem bez DPH: 12 505,00 CZK',
      'DPH celkem: 2 626,05 CZK',
      'Celkem: 15 131,05 CZK',
      'Započtené dobropisy: -1 000,00 CZK',
      'K úhradě: 14 131,05 CZK',
    ]);
    expect(v.supplier.ids).toEqual([
      { label: 'IČO', value: '27074358' },
      { label: 'DIČ', value: 'CZ27074358' },
    ]);
    expect(v.stamp).toBeNull();
  });

  it('German: labels, de-DE formats, country names; DRAFT and PAID marks', () => {
    const v = view(printable({ status: 'draft' }), 'de');
    expect(v.title).toBe('Rechnung');
    expect(v.stamp).toBe('ENTWURF');
    expect(v.lines[0]).toMatchObject({ quantity: '10', unit_price: expect.stringMatching(/^1\.250,50\sCZK$/), vat_rate: '21 %' });
    expect(v.purchaser!.address_lines).toContain('Deutschland');
    expect(view(printable({ status: 'paid' }), 'de').stamp).toBe('BEZAHLT');
  });

  it('formats amounts exactly, beyond what a binary float holds', () => {
    const v = view(printable({ total: '12345678901234567.89' }), 'en');
    expect(v.totals.find((t) => t.label === 'Total')!.value.replace(/\s/g, ' ')).toBe('CZK 12,345,678,901,234,567.89');
  });
});

describe('Pdfs', () => {
  function harness(current: () => PrintableDocument = () => printable()) {
    const calls = { renders: 0, storeGets: 0, storePuts: 0 };
    const stored = new Map<string, Buffer>();
    let release: () => void = () => undefined;
    let gate: Promise<void> | null = null;
    const source: DocumentSource = {
      document: async () => current(),
      workspace: async () => workspace(),
      logo: async () => null,
    };
    const template: DocumentTemplate = { version: 'v1', html: (view: PdfView) => `<h1>${view.title}</h1>` };
    const pdfs = new Pdfs({
      source,
      template,
      renderer: {
        render: async (html) => {
          calls.renders++;
          if (gate) await gate;
          return Buffer.from(`%PDF ${html}`);
        },
        close: async () => undefined,
      },
      store: {
        get: async (key) => {
          calls.storeGets++;
          return stored.get(key) ?? null;
        },
        put: async (key, pdf) => {
          calls.storePuts++;
          stored.set(key, pdf);
        },
      },
    });
    const hold = () => {
      gate = new Promise((resolve) => (release = resolve));
    };
    return { pdfs, calls, stored, hold, release: () => release() };
  }

  it('renders once, stores by ETag under the tenant, then serves the stored PDF', async () => {
    const { pdfs, calls, stored } = harness();
    const first = await pdfs.pdf(tenant, 'invoice', 42);
    expect(first).toMatchObject({ notModified: false, source: 'rendered', filename: 'Faktura 2026000007.pdf' });
    expect([...stored.keys()]).toEqual([expect.stringMatching(/^pdfs\/7\/live\/[0-9a-f]{32}\.pdf$/)]);
    const second = await pdfs.pdf(tenant, 'invoice', 42);
    expect(second.source).toBe('store');
    expect(second.pdf!.equals(first.pdf!)).toBe(true);
    expect(calls.renders).toBe(1);
  });

  it('current(): the version a mail delivery pins — stored, by ETag, with the document’s updated_at; stored(key) gives that very file back after the document changed', async () => {
    let doc = printable();
    const { pdfs, stored } = harness(() => doc);
    const pinned = await pdfs.current(tenant, 'invoice', 42);
    expect(pinned).toMatchObject({ etag: etag(doc, workspace(), 'v1'), documentUpdatedAt: doc.updated_at, filename: 'Faktura 2026000007.pdf' });
    expect(stored.get(pinned.key)!.equals(pinned.pdf)).toBe(true);
    doc = printable({ status: 'paid', updated_at: '2026-03-20T00:00:00.000Z' }); // marked paid
    const now = await pdfs.current(tenant, 'invoice', 42);
    expect(now.key).not.toBe(pinned.key);
    expect((await pdfs.stored(pinned.key))!.equals(pinned.pdf)).toBe(true);
    expect(await pdfs.stored('pdfs/7/live/absent.pdf')).toBeNull();
  });

  it('a matching If-None-Match answers not modified without rendering or reading storage', async () => {
    const { pdfs, calls } = harness();
    const { etag: tag } = await pdfs.pdf(tenant, 'invoice', 42);
    const before = { ...calls };
    const again = await pdfs.pdf(tenant, 'invoice', 42, tag);
    expect(again).toMatchObject({ notModified: true, pdf: null, etag: tag });
    expect(calls).toEqual(before);
  });

  it('concurrent requests for the same PDF share one render', async () => {
    const { pdfs, calls, hold, release } = harness();
    hold();
    const pending = Promise.all([pdfs.pdf(tenant, 'invoice', 42), pdfs.pdf(tenant, 'invoice', 42), pdfs.pdf(tenant, 'invoice', 42)]);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const results = await pending;
    expect(calls.renders).toBe(1);
    expect(calls.storePuts).toBe(1);
    expect(new Set(results.map((r) => r.etag)).size).toBe(1);
  });

  it('a failed render stores nothing and the next request renders again', async () => {
    const { pdfs, calls, stored } = harness();
    let fail = true;
    const deps = (pdfs as unknown as { deps: { renderer: { render: (html: string) => Promise<Buffer> } } }).deps;
    const render = deps.renderer.render;
    deps.renderer.render = async (html) => {
      if (fail) throw new Error('crashed');
      return render(html);
    };
    await expect(pdfs.pdf(tenant, 'invoice', 42)).rejects.toThrow('crashed');
    expect(stored.size).toBe(0);
    fail = false;
    expect((await pdfs.pdf(tenant, 'invoice', 42)).source).toBe('rendered');
    expect(calls.storePuts).toBe(1);
  });
});
