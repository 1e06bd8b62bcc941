// The extractor (createExtractor, the adapter of ports/extractor.ts) on real files: generated text
// PDFs in four languages, a clean image, a degraded photo and a scanned PDF (OCR kept to a handful of
// pages), files built to hurt (noise, 500 pages, decompression bombs, a time limit), and the optional
// OpenAI-compatible provider against a stub on loopback.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { drawObject, PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { createExtractor } from '../../services/expenses/extraction';
import { Extractor } from '../../services/expenses/ports/extractor';
import { add, prf, scoreFields } from '../bench/extraction-score';
import { CorpusEntry, makeCorpus } from '../support/extraction-corpus/render';
import { failure } from '../support/extraction-failure';

jest.setTimeout(300_000);

const dir = mkdtempSync(path.join(os.tmpdir(), 'extraction-test-'));
let extractor: Extractor;
let corpus: CorpusEntry[];

beforeAll(async () => {
  extractor = createExtractor();
  // Documents 0–3: sk, cs, en, de invoices; 4: a Slovak receipt. Text PDFs of all; one file of each OCR kind.
  corpus = await makeCorpus({
    dir,
    seed: 7,
    documents: 5,
    pick: (doc, kind) => kind === 'text_pdf' || (kind === 'image' && doc.lang === 'en') || (kind === 'photo' && doc.layout === 'receipt') || (kind === 'scan_pdf' && doc.lang === 'de'),
  });
});

afterAll(async () => {
  await extractor.close?.();
  rmSync(dir, { recursive: true, force: true });
});

function f1(entry: CorpusEntry, fields: Parameters<typeof scoreFields>[1]): number {
  return prf(Object.values(scoreFields(entry.document.fields, fields)).reduce((a, s) => add(a, s), { tp: 0, fp: 0, fn: 0 })).f1;
}


describe('text PDFs are read from their text layer', () => {
  it.each(['sk', 'cs', 'en', 'de'])('%s invoice: every labelled field', async (lang) => {
    const entry = corpus.find((e) => e.kind === 'text_pdf' && e.document.lang === lang && e.document.layout === 'classic')!;
    const result = await extractor.extract({ bytes: readFileSync(entry.file), contentType: 'application/pdf', tier: 'standard' });
    expect(result.method).toBe('text_layer');
    expect(result.pages).toBe(1);
    expect(result.fields.total).toBe(entry.document.fields.total);
    expect(result.fields.supplier.vat_id).toBe(entry.document.fields.supplier.vat_id);
    expect(f1(entry, result.fields)).toBeGreaterThanOrEqual(0.95);
    expect(result.confidence.total).toBeGreaterThan(0.9);
  });

  it('a narrow receipt PDF', async () => {
    const entry = corpus.find((e) => e.kind === 'text_pdf' && e.document.layout === 'receipt')!;
    const result = await extractor.extract({ bytes: readFileSync(entry.file), contentType: 'application/pdf', tier: 'standard' });
    expect(result.fields.line_items).toEqual(entry.document.fields.line_items);
    expect(f1(entry, result.fields)).toBeGreaterThanOrEqual(0.95);
  });

  it('the escalated tier reads at least as much', async () => {
    const entry = corpus.find((e) => e.kind === 'text_pdf' && e.document.lang === 'cs')!;
    const bytes = readFileSync(entry.file);
    const standard = await extractor.extract({ bytes, contentType: 'application/pdf', tier: 'standard' });
    const escalated = await extractor.extract({ bytes, contentType: 'application/pdf', tier: 'escalated' });
    expect(f1(entry, escalated.fields)).toBeGreaterThanOrEqual(f1(entry, standard.fields));
  });
});

describe('images and scans are OCR’d (shipped language data, offline)', () => {
  it.each([
    ['image', 'a clean PNG/JPEG'],
    ['photo', 'a degraded photo of a receipt'],
    ['scan_pdf', 'an image-only scanned PDF'],
  ])('%s: %s', async (kind) => {
    const entry = corpus.find((e) => e.kind === kind)!;
    const result = await extractor.extract({ bytes: readFileSync(entry.file), contentType: entry.contentType, tier: 'standard' });
    expect(result.method).toBe('ocr');
    expect(result.fields.total).toBe(entry.document.fields.total);
    expect(f1(entry, result.fields)).toBeGreaterThanOrEqual(0.85);
    // OCR'd fields are less sure than the same fields from a text layer.
    expect(result.confidence.total).toBeLessThan(1);
  });
});

/** A PNG whose header declares width × height, with a few bytes of deflated data behind it. */
function pngDeclaring(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(Buffer.alloc(width + 1))), chunk('IEND', Buffer.alloc(0))]);
}

describe('pathological files fail with a reason, in bounded time and memory', () => {
  it('a 10 MB image of noise: unreadable', async () => {
    const sharp = (await import('sharp')).default;
    let seed = 42;
    const raw = Buffer.alloc(1800 * 1850 * 3);
    for (let i = 0; i < raw.length; i++) raw[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    const png = await sharp(raw, { raw: { width: 1800, height: 1850, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    expect(png.length).toBeGreaterThan(9_000_000);
    const started = Date.now();
    const error = await failure(extractor.extract({ bytes: png, contentType: 'image/png', tier: 'standard' }));
    expect(error.reason).toBe('unreadable');
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('a PDF with 500 pages: too_many_pages', async () => {
    const pdf = await PDFDocument.create();
    for (let i = 0; i < 500; i++) pdf.addPage([200, 200]);
    const error = await failure(extractor.extract({ bytes: await pdf.save(), contentType: 'application/pdf', tier: 'standard' }));
    expect(error.reason).toBe('too_many_pages');
  });

  it('a PNG declaring 50 000 × 50 000 pixels (decompression bomb): too_large, nothing decoded', async () => {
    const before = process.memoryUsage().rss;
    const error = await failure(extractor.extract({ bytes: pngDeclaring(50_000, 50_000), contentType: 'image/png', tier: 'standard' }));
    expect(error.reason).toBe('too_large');
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it('a scanned PDF whose page image declares 40 000 × 40 000 pixels: too_large', async () => {
    const pdf = await PDFDocument.create();
    const page = pdf.addPage([595, 842]);
    const image = pdf.context.flateStream(Buffer.alloc(40_001), { Type: 'XObject', Subtype: 'Image', Width: 40_000, Height: 40_000, ColorSpace: 'DeviceGray', BitsPerComponent: 8 });
    const ref = pdf.context.register(image);
    page.node.setXObject(PDFName.of('Im0'), ref);
    page.pushOperators(drawObject('Im0'));
    const error = await failure(extractor.extract({ bytes: await pdf.save(), contentType: 'application/pdf', tier: 'standard' }));
    expect(error.reason).toBe('too_large');
  });

  it('a file that only pretends to be a PDF, an empty file, an oversized one', async () => {
    expect((await failure(extractor.extract({ bytes: Buffer.from('%PDF-1.7\ngarbage'), contentType: 'application/pdf', tier: 'standard' }))).reason).toBe('unreadable');
    expect((await failure(extractor.extract({ bytes: new Uint8Array(0), contentType: 'image/png', tier: 'standard' }))).reason).toBe('unreadable');
    expect((await failure(extractor.extract({ bytes: new Uint8Array(10 * 1024 * 1024 + 1), contentType: 'image/png', tier: 'standard' }))).reason).toBe('too_large');
  });

  it('the caller’s signal stops OCR at once (timeout), and the extractor reads the next file', async () => {
    const entry = corpus.find((e) => e.kind === 'image')!;
    const bytes = readFileSync(entry.file);
    const controller = new AbortController();
    const running = extractor.extract({ bytes, contentType: entry.contentType, tier: 'escalated', signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    expect((await failure(running)).reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
    const next = corpus.find((e) => e.kind === 'text_pdf')!;
    await expect(extractor.extract({ bytes: readFileSync(next.file), contentType: 'application/pdf', tier: 'standard' })).resolves.toMatchObject({ method: 'text_layer' });
  });

  it('its own time limit applies without a signal', async () => {
    const limited = createExtractor({ timeoutMs: { standard: 200, escalated: 200 } });
    try {
      const entry = corpus.find((e) => e.kind === 'photo')!;
      expect((await failure(limited.extract({ bytes: readFileSync(entry.file), contentType: entry.contentType, tier: 'standard' }))).reason).toBe('timeout');
    } finally {
      await limited.close?.();
    }
  });
});

describe('optional OpenAI-compatible provider (escalated tier only, stub on loopback)', () => {
  let server: http.Server;
  let url: string;
  let requests: { headers: http.IncomingHttpHeaders; body: any }[] = [];
  let answer: { status: number; content: unknown } = { status: 200, content: {} };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        requests.push({ headers: req.headers, body: JSON.parse(raw) });
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(answer.content) }, finish_reason: 'stop' }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => (requests = []));

  async function plainPdf(lines: string[]): Promise<Buffer> {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([595, 842]);
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 18, size: 11, font }));
    return Buffer.from(await pdf.save());
  }

  const providerAnswer = {
    supplier: { name: 'Acme Supplies Ltd', registration_id: null, tax_id: null, vat_id: 'DE136695976', address: { street: null, municipality: 'Berlin', postal_code: null, country_alpha2: 'DE' } },
    document_number: 'A-77',
    issue_date: '2026-03-12',
    due_date: 'soon',
    currency: 'EUR',
    subtotal: '100.00',
    vat_total: '19.00',
    total: '119.00',
    vat_breakdown: [{ rate: '19', base: '100.00', vat: '19.00' }],
    iban: 'DE89370400440532013001',
    bic: null,
    variable_symbol: null,
    line_items: [],
  };

  it('fills what the local readers missed, with a JSON-schema request; answers failing our checks are dropped', async () => {
    answer = { status: 200, content: providerAnswer };
    const provided = createExtractor({ provider: { url, model: 'local-model', apiKey: 'sk-test' } });
    try {
      const bytes = await plainPdf(['Thank you for your order, it was a pleasure to serve you.', 'Total 119.00 EUR']);
      const result = await provided.extract({ bytes, contentType: 'application/pdf', tier: 'escalated' });
      expect(requests).toHaveLength(1);
      const { headers, body } = requests[0];
      expect(headers.authorization).toBe('Bearer sk-test');
      expect(body.model).toBe('local-model');
      expect(body.response_format.type).toBe('json_schema');
      expect(body.response_format.json_schema.strict).toBe(true);
      expect(body.response_format.json_schema.schema.required).toEqual(expect.arrayContaining(['supplier', 'total', 'line_items']));
      expect(body.messages[1].content).toContain('Total 119.00 EUR');
      expect(result.method).toBe('provider');
      expect(result.fields.supplier.name).toBe('Acme Supplies Ltd');
      expect(result.fields.supplier.vat_id).toBe('DE136695976');
      expect(result.fields.total).toBe('119.00');
      expect(result.fields.iban).toBeNull(); // fails mod-97
      expect(result.fields.due_date).toBeNull(); // no date
    } finally {
      await provided.close?.();
    }
  });

  it('is never asked on the standard tier', async () => {
    const provided = createExtractor({ provider: { url, model: 'local-model' } });
    try {
      await provided.extract({ bytes: await plainPdf(['Thank you for your order, it was a pleasure to serve you.', 'Total 119.00 EUR']), contentType: 'application/pdf', tier: 'standard' });
      expect(requests).toHaveLength(0);
    } finally {
      await provided.close?.();
    }
  });

  it('a failing provider fails the escalated extraction with provider_error', async () => {
    answer = { status: 500, content: {} };
    const provided = createExtractor({ provider: { url, model: 'local-model' } });
    try {
      const error = await failure(provided.extract({ bytes: await plainPdf(['Thank you for your order, it was a pleasure to serve you.', 'Total 119.00 EUR']), contentType: 'application/pdf', tier: 'escalated' }));
      expect(error.reason).toBe('provider_error');
    } finally {
      await provided.close?.();
    }
  });
});
