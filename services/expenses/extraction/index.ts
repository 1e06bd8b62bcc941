// The extractor: the adapter of the extraction port (ports/extractor.ts). PDFs with a text layer are
// read from it; images and scanned PDFs are OCR'd; the escalated tier reads more ways and may ask an
// OpenAI-compatible provider. Every failure is an ExtractionFailure with a reason; nothing throws past it.
import { ExtractionFailure, ExtractionInput, ExtractionResult, Extractor } from '../ports/extractor';
import { ParsedFields, parseFields } from '../domain/extraction/fields';
import { Line, linesFromWords } from '../domain/extraction/layout';
import { mergeReadings } from '../domain/extraction/merge';
import { prepareImage, RawImage } from './images';
import { abortable, checkAborted, withTimeout } from './limits';
import { OcrEngine, OcrLanguage, PSM } from './ocr';
import { checkImageSizes, openPdf, pageImage, textLines } from './pdf';
import { ProviderOptions, askProvider } from './provider';

export interface ExtractorOptions {
  /** OCR workers (pages read at once). Default 1. */
  ocrWorkers?: number;
  languages?: OcrLanguage[];
  /** PDFs with more pages are refused (`too_many_pages`). Default 50. */
  maxPages?: number;
  /** Scanned pages OCR'd per document (the rest are skipped: invoices put their fields on page one). Default 3. */
  maxOcrPages?: number;
  /** Decoded pixels of one image or page image; above → `too_large`. Default 40 MP. */
  maxPixels?: number;
  /** Time limit per tier, in ms, on top of the caller's signal. Defaults 60 s and 180 s. */
  timeoutMs?: { standard: number; escalated: number };
  /** The optional remote reader of the escalated tier (off when absent). */
  provider?: ProviderOptions | null;
  now?: () => Date;
}

export const MAX_FILE_BYTES = 10 * 1024 * 1024;

/** Time limit per tier when EXTRACTION_TIMEOUT_MS is not set. */
export const DEFAULT_TIMEOUT_MS = { standard: 60_000, escalated: 180_000 };

/** Reads the options from the environment (docs/extraction.md lists them). */
export function extractorOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ExtractorOptions {
  const num = (name: string) => (env[name] && /^\d+$/.test(env[name]!) ? Number(env[name]) : undefined);
  return {
    ocrWorkers: num('EXTRACTION_OCR_WORKERS'),
    maxPages: num('EXTRACTION_MAX_PAGES'),
    maxOcrPages: num('EXTRACTION_MAX_OCR_PAGES'),
    maxPixels: num('EXTRACTION_MAX_PIXELS'),
    timeoutMs: num('EXTRACTION_TIMEOUT_MS') ? { standard: num('EXTRACTION_TIMEOUT_MS')!, escalated: 3 * num('EXTRACTION_TIMEOUT_MS')! } : undefined,
    provider: env.EXTRACTION_PROVIDER_URL
      ? { url: env.EXTRACTION_PROVIDER_URL, model: env.EXTRACTION_PROVIDER_MODEL ?? 'gpt-4o-mini', apiKey: env.EXTRACTION_PROVIDER_API_KEY, timeoutMs: num('EXTRACTION_PROVIDER_TIMEOUT_MS') }
      : null,
  };
}

/** Text layers with fewer letters than this are treated as scans (a stray page number is no text). */
const MIN_TEXT_CHARS = 40;

export function createExtractor(options: ExtractorOptions = {}): Extractor {
  const limits = {
    maxPages: options.maxPages ?? 50,
    maxOcrPages: options.maxOcrPages ?? 3,
    maxPixels: options.maxPixels ?? 40_000_000,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
  const now = options.now ?? (() => new Date());
  let ocr: OcrEngine | undefined;
  const engine = () => (ocr ??= new OcrEngine({ workers: Math.max(1, options.ocrWorkers ?? 1), languages: options.languages ?? ['slk', 'ces', 'deu', 'eng'] }));

  /** OCR readings of one image: one per page-segmentation mode of the tier. */
  async function ocrImage(image: Buffer | RawImage, escalated: boolean, page: number, signal: AbortSignal): Promise<{ lines: Line[]; confidence: number }[]> {
    // sharp cannot be interrupted; the job stops waiting for it at once.
    const prepared = await abortable(prepareImage(image, limits.maxPixels, escalated), signal);
    checkAborted(signal);
    // Standard: automatic segmentation (columns, tables). Escalated adds single-block and sparse text,
    // which recover rows that automatic segmentation splits or drops on receipts and skewed photos.
    const modes = escalated ? [PSM.AUTO, PSM.SINGLE_BLOCK, PSM.SPARSE_TEXT] : [PSM.AUTO];
    const out: { lines: Line[]; confidence: number }[] = [];
    for (const psm of modes) {
      const result = await engine().recognize(prepared.png, psm, signal);
      out.push({ lines: linesFromWords(result.words, page, prepared.width), confidence: result.confidence });
    }
    return out;
  }

  async function run(input: ExtractionInput, signal: AbortSignal): Promise<ExtractionResult> {
    const escalated = input.tier === 'escalated';
    if (input.bytes.byteLength === 0) throw new ExtractionFailure('unreadable', 'the file is empty');
    if (input.bytes.byteLength > MAX_FILE_BYTES) throw new ExtractionFailure('too_large', 'the file is larger than 10 MB');
    let readings: { lines: Line[]; confidence: number }[][] = []; // per page, per reading
    let method: ExtractionResult['method'] = 'ocr';
    let pages = 1;
    if (input.contentType === 'application/pdf') {
      const doc = await openPdf(input.bytes, limits, signal);
      try {
        pages = doc.numPages;
        const text = await textLines(doc, signal);
        const letters = text.flat().reduce((n, l) => n + l.text.replace(/[^\p{L}\p{N}]/gu, '').length, 0);
        if (letters >= MIN_TEXT_CHARS) {
          method = 'text_layer';
          readings = [[{ lines: text.flat(), confidence: 1 }]];
        } else {
          await checkImageSizes(input.bytes, limits.maxPixels);
          const perPage: { lines: Line[]; confidence: number }[][] = [];
          for (let n = 1; n <= Math.min(doc.numPages, limits.maxOcrPages); n++) {
            checkAborted(signal);
            const page = await doc.getPage(n);
            const image = await pageImage(page, limits.maxPixels, signal);
            page.cleanup();
            if (!image) continue;
            const channels = image.kind === 1 ? 1 : image.kind === 2 ? 3 : 4;
            perPage.push(await ocrImage({ width: image.width, height: image.height, channels, data: image.data }, escalated, n, signal));
          }
          if (perPage.length === 0) throw new ExtractionFailure('unreadable', 'the PDF has neither a text layer nor page images');
          // Reading k of the document = reading k of every page.
          readings = perPage[0].map((_, k) => perPage.map((p) => p[k]));
          readings = readings.map((byPage) => [{ lines: byPage.flatMap((p) => p.lines), confidence: byPage.reduce((s, p) => s + p.confidence, 0) / byPage.length }]);
        }
      } finally {
        await doc.destroy().catch(() => undefined);
      }
    } else {
      readings = (await ocrImage(Buffer.from(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength), escalated, 1, signal)).map((r) => [r]);
    }
    checkAborted(signal);
    const parsed: ParsedFields[] = readings.map(([reading]) => discount(parseFields(reading.lines, { broad: escalated, now: now() }), reading.confidence));
    if (escalated && method === 'text_layer') parsed.unshift(parseFields(readings[0][0].lines, { now: now() }));
    let result = parsed.length > 1 ? mergeReadings(parsed) : parsed[0];
    if (escalated && options.provider) {
      const text = readings[0][0].lines.map((l) => l.text).join('\n');
      const answer = await askProvider(options.provider, text, signal);
      const merged = mergeReadings([result, answer]);
      if (JSON.stringify(merged.fields) !== JSON.stringify(result.fields)) method = 'provider';
      result = merged;
    }
    return { fields: result.fields, confidence: result.confidence, method, pages };
  }

  return {
    async extract(input) {
      const limit = withTimeout(input.signal, input.tier === 'escalated' ? limits.timeoutMs.escalated : limits.timeoutMs.standard);
      try {
        return await run(input, limit.signal);
      } catch (error) {
        if (error instanceof ExtractionFailure) throw error;
        if (limit.signal.aborted) throw new ExtractionFailure('timeout', 'extraction was stopped at its time limit');
        throw new ExtractionFailure('unreadable', `the file cannot be read: ${(error as Error)?.message ?? String(error)}`);
      } finally {
        limit.clear();
      }
    },
    async close() {
      await ocr?.close();
    },
  };
}

/** OCR'd readings are as sure as the OCR was: confidences scale with the mean word confidence. */
function discount(parsed: ParsedFields, ocrConfidence: number): ParsedFields {
  if (ocrConfidence >= 1) return parsed;
  const factor = 0.7 + 0.3 * Math.max(0, Math.min(1, ocrConfidence));
  return { fields: parsed.fields, confidence: Object.fromEntries(Object.entries(parsed.confidence).map(([k, v]) => [k, Math.round(v * factor * 100) / 100])) };
}
