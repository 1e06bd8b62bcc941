// Writes the corpus: each document as a text PDF (Chromium), a clean PNG or JPEG, a degraded phone
// photo (blur, noise, slight rotation, low JPEG quality) and an image-only scanned PDF (pdf-lib), each
// with its labels as JSON next to it (<file>.json). Deterministic for a seed: the same files every run.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { chromium } from 'playwright-core';
import sharp from 'sharp';
import { PAGE_HEIGHT, RECEIPT_WIDTH } from './families';
import { documentHtml } from './html';
import { CorpusDocument, corpusDocuments, isReceipt, Rand, rng } from './model';
import { realPhoto, realScanPages } from './degrade';
import { widenedDocuments } from './split';

export type FileKind = 'text_pdf' | 'image' | 'photo' | 'scan_pdf' | 'gif';
export const FILE_KINDS: FileKind[] = ['text_pdf', 'image', 'photo', 'scan_pdf', 'gif'];

export interface CorpusEntry {
  file: string;
  kind: FileKind;
  contentType: 'application/pdf' | 'image/png' | 'image/jpeg' | 'image/gif';
  document: CorpusDocument;
}

/** 'first': the first corpus (three layouts, all tuned); 'widened': the split corpus of split.ts. */
export type CorpusName = 'first' | 'widened';

/** Multi-page documents exist as PDFs only (a photo or an image is one page). */
export const kindFits = (doc: CorpusDocument, kind: FileKind) => doc.layout !== 'multipage' || kind === 'text_pdf' || kind === 'scan_pdf';

export interface CorpusOptions {
  dir: string;
  seed: number;
  documents: number;
  /** Which corpus (default 'first', the one the unit tests read). */
  corpus?: CorpusName;
  kinds?: FileKind[];
  chromiumPath?: string;
  /** Only these documents and kinds (tests: a few files of each kind). */
  pick?: (doc: CorpusDocument, kind: FileKind) => boolean;
  onProgress?: (done: number, total: number, file: string) => void;
}

export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
}

/** Gaussian-ish noise as a greyscale overlay (sum of uniforms), seeded. */
function noise(width: number, height: number, r: Rand, amplitude: number): Buffer {
  const buf = Buffer.alloc(width * height);
  for (let i = 0; i < buf.length; i++) buf[i] = Math.max(0, Math.min(255, 128 + ((r.next() + r.next() + r.next() - 1.5) / 1.5) * amplitude));
  return buf;
}

async function photo(png: Buffer, r: Rand): Promise<Buffer> {
  const meta = await sharp(png).metadata();
  const pad = Math.round(meta.width! * 0.06);
  const angle = (r.next() - 0.5) * 3; // ±1.5°
  const tint = { r: 200 + r.int(0, 30), g: 190 + r.int(0, 30), b: 170 + r.int(0, 30) };
  const rotated = await sharp(png)
    .extend({ top: pad, bottom: pad, left: pad, right: pad, background: tint })
    .rotate(angle, { background: tint })
    .modulate({ brightness: 0.88 + r.next() * 0.12 })
    .blur(0.5 + r.next() * 0.5)
    .png()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = rotated.info;
  const grain = await sharp(noise(width, height, r, 36), { raw: { width, height, channels: 1 } }).png().toBuffer();
  return sharp(rotated.data).composite([{ input: grain, blend: 'soft-light' }]).jpeg({ quality: r.int(55, 75) }).toBuffer();
}

/** An image-only PDF, one page per JPEG, `pointsPerPixel` giving its physical size. */
async function imagePdf(jpegs: Buffer[], pointsPerPixel: number): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  pdf.setCreationDate(new Date('2026-01-01T00:00:00Z'));
  pdf.setModificationDate(new Date('2026-01-01T00:00:00Z'));
  pdf.setProducer('invoicing extraction corpus');
  for (const jpeg of jpegs) {
    const image = await pdf.embedJpg(jpeg);
    const page = pdf.addPage([image.width * pointsPerPixel, image.height * pointsPerPixel]);
    page.drawImage(image, { x: 0, y: 0, width: image.width * pointsPerPixel, height: image.height * pointsPerPixel });
  }
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}

async function scan(png: Buffer, r: Rand, receipt: boolean): Promise<Buffer> {
  const grey = await sharp(png).greyscale().raw().toBuffer({ resolveWithObject: true });
  const grain = await sharp(noise(grey.info.width, grey.info.height, r, 18), { raw: { width: grey.info.width, height: grey.info.height, channels: 1 } }).png().toBuffer();
  const jpeg = await sharp(grey.data, { raw: { width: grey.info.width, height: grey.info.height, channels: 1 } })
    .composite([{ input: grain, blend: 'soft-light' }])
    .rotate((r.next() - 0.5) * 1.2, { background: '#ffffff' })
    .jpeg({ quality: 80 })
    .toBuffer();
  const pdf = await PDFDocument.create();
  pdf.setCreationDate(new Date('2026-01-01T00:00:00Z'));
  pdf.setModificationDate(new Date('2026-01-01T00:00:00Z'));
  pdf.setProducer('invoicing extraction corpus');
  const image = await pdf.embedJpg(jpeg);
  // A4 at the scan's aspect ratio; receipts 80 mm wide.
  const pageWidth = receipt ? 226.8 : 595.3;
  const pageHeight = (pageWidth * image.height) / image.width;
  const page = pdf.addPage([pageWidth, pageHeight]);
  page.drawImage(image, { x: 0, y: 0, width: pageWidth, height: pageHeight });
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}

export async function makeCorpus(options: CorpusOptions): Promise<CorpusEntry[]> {
  const kinds = options.kinds ?? FILE_KINDS;
  mkdirSync(options.dir, { recursive: true });
  const docs = options.corpus === 'widened' ? widenedDocuments(options.seed, options.documents) : corpusDocuments(options.seed, options.documents);
  const entries: CorpusEntry[] = [];
  const wanted = (doc: CorpusDocument, kind: FileKind) => kindFits(doc, kind) && (options.pick?.(doc, kind) ?? true);
  const total = docs.reduce((n, doc) => n + kinds.filter((kind) => wanted(doc, kind)).length, 0);
  const browser = await chromium.launch({ executablePath: options.chromiumPath ?? chromiumPath(), args: ['--font-render-hinting=none'] });
  try {
    const context = await browser.newContext({ deviceScaleFactor: 2 });
    const page = await context.newPage();
    for (const doc of docs) {
      const docKinds = kinds.filter((kind) => wanted(doc, kind));
      if (docKinds.length === 0) continue;
      const files = docKinds.map((kind) => [kind, fileOf(options.dir, doc.id, kind)] as const);
      if (files.every(([, file]) => existsSync(file) && existsSync(`${file}.json`))) {
        // Cached: each document has its own seeded randomness, so skipping one changes no other.
        for (const [kind, file] of files) {
          entries.push({ file, kind, contentType: contentTypeOf(file), document: doc });
          options.onProgress?.(entries.length, total, file);
        }
        continue;
      }
      const r = new Rand(rng(options.seed * 31 + Number(doc.id.slice(0, 3))));
      const receipt = isReceipt(doc.layout);
      const viewWidth = RECEIPT_WIDTH[doc.layout] ?? 794;
      await page.setViewportSize({ width: viewWidth, height: 600 });
      await page.setContent(documentHtml(doc, options.seed), { waitUntil: 'load' });
      const contentHeight = Number(await page.evaluate('document.body.scrollHeight'));
      const shot = await page.screenshot({ fullPage: true, type: 'png' });
      const labels = (file: string, kind: FileKind, contentType: CorpusEntry['contentType']) => {
        entries.push({ file, kind, contentType, document: doc });
        writeFileSync(`${file}.json`, JSON.stringify({ id: doc.id, kind, contentType, lang: doc.lang, layout: doc.layout, wording: doc.wording, scenario: doc.scenario, split: doc.split, fields: doc.fields }, null, 2));
        options.onProgress?.(entries.length, total, file);
      };
      for (const kind of docKinds) {
        const base = path.join(options.dir, `${doc.id}-${kind}`);
        if (kind === 'text_pdf') {
          const file = `${base}.pdf`;
          if (!existsSync(file)) {
            const pdf = receipt
              ? await page.pdf({ width: `${Math.round(viewWidth * 0.2646)}mm`, height: `${Math.ceil(contentHeight * 0.2646) + 6}mm`, printBackground: true, margin: { top: '0', bottom: '0', left: '0', right: '0' } })
              : await page.pdf({ format: 'A4', printBackground: true });
            writeFileSync(file, pdf);
          }
          labels(file, kind, 'application/pdf');
        } else if (kind === 'image') {
          const jpeg = Number(doc.id.slice(0, 3)) % 2 === 1;
          const file = `${base}.${jpeg ? 'jpg' : 'png'}`;
          if (!existsSync(file)) writeFileSync(file, jpeg ? await sharp(shot).flatten({ background: '#ffffff' }).jpeg({ quality: 85 }).toBuffer() : shot);
          labels(file, kind, jpeg ? 'image/jpeg' : 'image/png');
        } else if (kind === 'gif') {
          const file = `${base}.gif`;
          if (!existsSync(file)) writeFileSync(file, await sharp(shot).flatten({ background: '#ffffff' }).gif({ colours: 16 }).toBuffer());
          labels(file, kind, 'image/gif');
        } else if (kind === 'photo') {
          const file = `${base}.jpg`;
          // always drawn: the seeded noise of later files must not depend on the cache
          const bytes = doc.degradation === 'real' ? await realPhoto(shot, r) : await photo(shot, r);
          if (!existsSync(file)) writeFileSync(file, bytes);
          labels(file, kind, 'image/jpeg');
        } else {
          const file = `${base}.pdf`;
          let bytes: Buffer;
          if (doc.degradation === 'real') {
            const scanned = await realScanPages(shot, r, doc.layout === 'multipage' || doc.layout === 'footer' ? PAGE_HEIGHT * 2 : null);
            bytes = await imagePdf(scanned.pages, 72 / scanned.dpi);
          } else bytes = await scan(shot, r, receipt);
          if (!existsSync(file)) writeFileSync(file, bytes);
          labels(file, kind, 'application/pdf');
        }
      }
    }
  } finally {
    await browser.close();
  }
  return entries;
}

/** Where a corpus lives by default: a cache outside the checkout, one folder per seed and size. */
export function corpusDir(seed: number, documents: number, corpus: CorpusName = 'first'): string {
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  return path.join(process.env.EXTRACTION_CORPUS_DIR ?? path.join(cache, 'invoicing-extraction-corpus'), `${corpus === 'widened' ? 'widened-' : ''}seed-${seed}-n${documents}`);
}

function fileOf(dir: string, id: string, kind: FileKind): string {
  const base = path.join(dir, `${id}-${kind}`);
  if (kind === 'image') return `${base}.${Number(id.slice(0, 3)) % 2 === 1 ? 'jpg' : 'png'}`;
  if (kind === 'gif') return `${base}.gif`;
  return kind === 'photo' ? `${base}.jpg` : `${base}.pdf`;
}

function contentTypeOf(file: string): CorpusEntry['contentType'] {
  return file.endsWith('.pdf') ? 'application/pdf' : file.endsWith('.png') ? 'image/png' : file.endsWith('.gif') ? 'image/gif' : 'image/jpeg';
}
