// Images before OCR (sharp): decoded under a pixel cap (decompression bombs fail before their pixels
// are allocated), turned upright (EXIF), greyscale, contrast-stretched and scaled so text is about the
// size it has at 300 dpi — tesseract's LSTM reads best at a cap height of ~20–30 px.
import sharp from 'sharp';
import { ExtractionFailure } from '../ports/extractor';

export interface Prepared {
  png: Buffer;
  width: number;
  height: number;
}

export interface RawImage {
  width: number;
  height: number;
  channels: 1 | 3 | 4;
  data: Uint8Array | Uint8ClampedArray;
}

/** Target widths: an A4 page at 300 dpi is 2480 px wide, an 80 mm receipt 945 px. */
export function targetWidth(width: number, height: number, escalated: boolean): number {
  const receipt = height / width > 1.9;
  if (receipt) return escalated ? 1300 : 1000;
  return escalated ? 3000 : 2480;
}

export async function prepareImage(input: Buffer | RawImage, maxPixels: number, escalated: boolean): Promise<Prepared> {
  try {
    const source = Buffer.isBuffer(input)
      ? sharp(input, { limitInputPixels: maxPixels, failOn: 'truncated', sequentialRead: true, animated: false })
      : sharp(Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength), { raw: { width: input.width, height: input.height, channels: input.channels }, limitInputPixels: maxPixels });
    const meta = Buffer.isBuffer(input) ? await source.metadata() : { width: input.width, height: input.height, orientation: undefined };
    if (!meta.width || !meta.height) throw new ExtractionFailure('unreadable', 'the image has no size');
    if (meta.width * meta.height > maxPixels) throw new ExtractionFailure('too_large', `the image has ${meta.width}×${meta.height} pixels`);
    const rotated = (meta.orientation ?? 1) >= 5;
    const [fullW, fullH] = rotated ? [meta.height, meta.width] : [meta.width, meta.height];
    let grey = source.rotate().greyscale();
    if (await isNoise(grey.clone(), fullW, fullH)) throw new ExtractionFailure('unreadable', 'the image does not look like a document (it is noise)');
    // A photo of a page on a table: OCR the paper, not the table (and judge "receipt" by the paper's shape).
    const paper = await paperBox(grey.clone(), fullW, fullH);
    if (paper) grey = sharp(await grey.extract(paper).raw().toBuffer(), { raw: { width: paper.width, height: paper.height, channels: 1 } });
    const [w, h] = paper ? [paper.width, paper.height] : [fullW, fullH];
    const width = targetWidth(w, h, escalated);
    let pipeline = grey.resize({ width, kernel: width > w ? 'lanczos3' : 'lanczos3' }).normalise();
    if (escalated) pipeline = pipeline.sharpen();
    const { data, info } = await pipeline.png({ compressionLevel: 1 }).toBuffer({ resolveWithObject: true });
    return { png: data, width: info.width, height: info.height };
  } catch (error) {
    if (error instanceof ExtractionFailure) throw error;
    const message = (error as Error).message ?? String(error);
    if (/pixel limit|exceeds/i.test(message)) throw new ExtractionFailure('too_large', `the image is too large to read: ${message}`);
    throw new ExtractionFailure('unreadable', `the image cannot be decoded: ${message}`);
  }
}

/**
 * The paper in a photo: the bounding box of the bright region (grey above the midpoint between the
 * image's 5th and 95th percentile) — rows and columns more than half bright — with a 1 % margin.
 * Null when the paper fills the image (a scan, a screenshot) or nothing clear stands out. (Tried and
 * measured worse on the tuned photos: a 64-px thumbnail, thresholds relative to the image's outer ring.)
 */
export async function paperBox(grey: sharp.Sharp, width: number, height: number): Promise<{ left: number; top: number; width: number; height: number } | null> {
  const small = 256;
  const { data, info } = await grey.resize({ width: small, height: small, fit: 'fill' }).raw().toBuffer({ resolveWithObject: true });
  const sorted = [...data].sort((a, b) => a - b);
  const low = sorted[Math.floor(sorted.length * 0.05)];
  const high = sorted[Math.floor(sorted.length * 0.95)];
  if (high - low < 40) return null;
  const threshold = (low + high) / 2;
  const bright = (x: number, y: number) => data[y * info.width + x] > threshold;
  const rows: boolean[] = [];
  const cols: boolean[] = [];
  for (let y = 0; y < info.height; y++) {
    let n = 0;
    for (let x = 0; x < info.width; x++) if (bright(x, y)) n++;
    rows.push(n > info.width * 0.5);
  }
  for (let x = 0; x < info.width; x++) {
    let n = 0;
    for (let y = 0; y < info.height; y++) if (bright(x, y)) n++;
    cols.push(n > info.height * 0.5);
  }
  const span = (flags: boolean[]) => [flags.indexOf(true), flags.lastIndexOf(true)];
  const [y0, y1] = span(rows);
  const [x0, x1] = span(cols);
  if (y0 < 0 || x0 < 0) return null;
  const area = ((x1 - x0 + 1) * (y1 - y0 + 1)) / (info.width * info.height);
  if (area > 0.9 || area < 0.2) return null;
  const margin = 0.01;
  const left = Math.max(0, Math.floor((x0 / info.width - margin) * width));
  const top = Math.max(0, Math.floor((y0 / info.height - margin) * height));
  const right = Math.min(width, Math.ceil(((x1 + 1) / info.width + margin) * width));
  const bottom = Math.min(height, Math.ceil(((y1 + 1) / info.height + margin) * height));
  return { left, top, width: right - left, height: bottom - top };
}

/** Noise is no document, and OCR of noise runs long. A page is mostly paper (grey-level entropy of a
 * few bits); a natural photo has high entropy but neighbouring pixels alike. Noise has both high entropy
 * and no spatial correlation: a slight blur takes most of its contrast away. Measured on a central
 * 512-px crop at full resolution (downscaling would average the noise away). */
async function isNoise(grey: sharp.Sharp, width: number, height: number): Promise<boolean> {
  const size = Math.min(512, width, height);
  const crop = await grey.extract({ left: Math.floor((width - size) / 2), top: Math.floor((height - size) / 2), width: size, height: size }).raw().toBuffer();
  const raw = { raw: { width: size, height: size, channels: 1 as const } };
  const before = await sharp(crop, raw).stats();
  if (before.entropy < 7) return false;
  const blurred = await sharp(crop, raw).blur(1).raw().toBuffer();
  const after = await sharp(blurred, raw).stats();
  return after.channels[0].stdev < 0.5 * before.channels[0].stdev;
}
