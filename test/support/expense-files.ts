// Real files for the expense upload tests, generated here (pdf-lib, sharp): valid ones of each allowed
// type, and files that only pretend (a `%PDF-` header with garbage behind, truncated PNG/JPEG/GIF).
import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import sharp from 'sharp';

/** An invoice with a text layer: `text` (lines separated by \n) on an A4 page. */
export async function pdfFile(text = INVOICE_TEXT, { objectStreams = true } = {}): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  text.split('\n').forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 18, size: 11, font }));
  return Buffer.from(await doc.save({ useObjectStreams: objectStreams }));
}

export const INVOICE_TEXT = [
  'INVOICE 2026-0042',
  'Supplier: Papiernictvo Nova s.r.o., Hlavna 12, 811 01 Bratislava, Slovakia',
  'Company ID: 35757442   VAT ID: SK2021853504',
  'Issue date: 2026-03-01   Due date: 2026-03-15',
  'Office paper A4 (5 packs)                    100.00 EUR',
  'Subtotal 100.00 EUR   VAT 20 % 20.00 EUR   Total 120.00 EUR',
  'IBAN: SK3112000000198742637541   Variable symbol: 20260042',
].join('\n');

/** A noisy image (so it does not compress to nothing); `bytes` roughly sets the size of a PNG. */
export async function imageFile(format: 'png' | 'jpeg' | 'gif', side = 64): Promise<Buffer> {
  const pixels = randomBytes(side * side * 3);
  const image = sharp(pixels, { raw: { width: side, height: side, channels: 3 } });
  if (format === 'png') return image.png().toBuffer();
  if (format === 'jpeg') return image.jpeg({ quality: 80 }).toBuffer();
  return image.gif().toBuffer();
}

/** `%PDF-1.7` and then nothing a PDF reader could use. */
export const fakePdf = () => Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(5000)]);

/** The first `fraction` of a file: a download or copy cut off. */
export const truncated = (file: Buffer, fraction = 0.6) => file.subarray(0, Math.floor(file.length * fraction));

/** A scanned-looking invoice: `text` drawn on a white A4 page at 150 dpi as PNG (it takes a real OCR job). */
export async function invoiceImage(text = INVOICE_TEXT): Promise<Buffer> {
  const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const lines = text.split('\n').map((line, i) => `<text x="80" y="${150 + i * 60}" font-family="sans-serif" font-size="32">${escape(line)}</text>`);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1240" height="1754"><rect width="100%" height="100%" fill="white"/>${lines.join('')}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/**
 * The "frozen process" PDF of issue #17: one page whose deflated content stream holds `operators` text
 * operators `(AB)'` (next line, show "AB"). 10 million of them are ~88 KB on disk and keep PDF.js's text
 * extraction busy for tens of seconds without yielding.
 */
export async function textOperatorBomb(operators = 10_000_000): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.node.setFontDictionary(PDFName.of('F1'), font.ref);
  const content = Buffer.concat([Buffer.from('BT /F1 1 Tf 1 TL 50 800 Td\n'), Buffer.from("(AB)'".repeat(operators)), Buffer.from('\nET\n')]);
  const stream = doc.context.stream(deflateSync(content, { level: 9 }), { Filter: 'FlateDecode' });
  page.node.set(PDFName.of('Contents'), doc.context.register(stream));
  return Buffer.from(await doc.save());
}
