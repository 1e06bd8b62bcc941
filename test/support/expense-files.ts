// Real files for the expense upload tests, generated here (pdf-lib, sharp): valid ones of each allowed
// type, and files that only pretend (a `%PDF-` header with garbage behind, truncated PNG/JPEG/GIF).
import { randomBytes } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import sharp from 'sharp';

export async function pdfFile(text = 'Invoice 2026-0001 Total 121.00 EUR', { objectStreams = true } = {}): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.drawText(text, { x: 50, y: 780, size: 14, font: await doc.embedFont(StandardFonts.Helvetica) });
  return Buffer.from(await doc.save({ useObjectStreams: objectStreams }));
}

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
