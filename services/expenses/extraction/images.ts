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
    const [w, h] = rotated ? [meta.height, meta.width] : [meta.width, meta.height];
    const width = targetWidth(w, h, escalated);
    const grey = source.rotate().greyscale();
    // A page of noise is no document: real pages are mostly paper, so their grey levels say little.
    const stats = await grey.clone().resize({ width: Math.min(w, 600) }).stats();
    if (stats.entropy > 7.2) throw new ExtractionFailure('unreadable', 'the image does not look like a document (it is noise)');
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
