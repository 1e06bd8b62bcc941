// OCR with tesseract.js (WASM, in worker threads) and the language data shipped in @tesseract.js-data:
// nothing is downloaded, nothing written to disk. A small pool of workers bounds CPU and memory; a
// worker running past the job's time limit is terminated (WASM cannot be interrupted) and replaced.
import { mkdirSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createWorker, OEM, PSM, Worker } from 'tesseract.js';
import { ExtractionFailure } from '../ports/extractor';
import { Word } from '../domain/extraction/layout';
import { checkAborted } from './limits';

export type OcrLanguage = 'eng' | 'deu' | 'ces' | 'slk';

export interface OcrOptions {
  /** Workers (= pages OCR'd at once). Default 1: OCR is CPU-bound. */
  workers: number;
  languages: OcrLanguage[];
}

export interface OcrPage {
  words: Word[];
  width: number;
  /** Mean word confidence, 0…1. */
  confidence: number;
}

/** Tesseract's LSTM models ("best_int": the accurate ones, integer-quantised for speed), one package per
 * language; tesseract.js reads all languages from one directory, so a directory of links to them. */
function languageDir(languages: OcrLanguage[]): string {
  const dir = path.join(os.tmpdir(), `invoicing-tessdata-${process.getuid?.() ?? 0}`);
  mkdirSync(dir, { recursive: true });
  for (const lang of languages) {
    const target = path.join(path.dirname(require.resolve(`@tesseract.js-data/${lang}/package.json`)), '4.0.0_best_int', `${lang}.traineddata.gz`);
    const link = path.join(dir, `${lang}.traineddata.gz`);
    let current: string | undefined;
    try {
      current = readlinkSync(link);
    } catch {
      current = undefined;
    }
    if (current !== target) {
      try {
        if (current !== undefined) unlinkSync(link);
        symlinkSync(target, link);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
  }
  return dir;
}

export class OcrEngine {
  private readonly idle: Worker[] = [];
  private readonly waiting: ((w: Worker) => void)[] = [];
  private created = 0;
  private closed = false;

  constructor(private readonly options: OcrOptions) {}

  async recognize(png: Buffer, psm: PSM, signal?: AbortSignal): Promise<OcrPage> {
    checkAborted(signal);
    const worker = await this.acquire(signal);
    let timedOut = false;
    const onAbort = () => {
      timedOut = true;
      // The only way to stop a recognition in progress; the pool creates a fresh worker next time.
      void worker.terminate().catch(() => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await worker.setParameters({ tessedit_pageseg_mode: psm, preserve_interword_spaces: '1', user_defined_dpi: '300' });
      const { data } = await worker.recognize(png, {}, { blocks: true, text: false });
      const words: Word[] = [];
      let confidenceSum = 0;
      for (const block of data.blocks ?? []) {
        for (const paragraph of block.paragraphs) {
          for (const line of paragraph.lines) {
            const lineHeight = line.bbox.y1 - line.bbox.y0;
            for (const w of line.words) {
              words.push({ text: w.text, x0: w.bbox.x0, x1: w.bbox.x1, y: (line.bbox.y0 + line.bbox.y1) / 2, height: Math.max(1, Math.min(lineHeight, w.bbox.y1 - w.bbox.y0 || lineHeight)) });
              confidenceSum += w.confidence;
            }
          }
        }
      }
      this.release(worker);
      return { words, width: 0, confidence: words.length ? confidenceSum / words.length / 100 : 0 };
    } catch (error) {
      this.created--;
      if (timedOut || signal?.aborted) throw new ExtractionFailure('timeout', 'OCR was stopped at the time limit');
      void worker.terminate().catch(() => undefined);
      throw new ExtractionFailure('unreadable', `OCR failed: ${String((error as Error)?.message ?? error)}`);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((w) => w.terminate().catch(() => undefined)));
  }

  private async acquire(signal?: AbortSignal): Promise<Worker> {
    if (this.closed) throw new ExtractionFailure('unreadable', 'the OCR engine is closed');
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.created < this.options.workers) {
      this.created++;
      try {
        return await createWorker(this.options.languages.join('+'), OEM.LSTM_ONLY, {
          langPath: languageDir(this.options.languages),
          cacheMethod: 'none',
          // Without a handler tesseract.js throws a worker's errors where nothing can catch them.
          errorHandler: () => undefined,
          gzip: true,
          legacyCore: false,
          legacyLang: false,
        });
      } catch (error) {
        this.created--;
        throw new ExtractionFailure('unreadable', `OCR could not start: ${String((error as Error)?.message ?? error)}`);
      }
    }
    return new Promise<Worker>((resolve, reject) => {
      const take = (w: Worker) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(w);
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        reject(new ExtractionFailure('timeout', 'OCR was stopped at the time limit while waiting for a worker'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(take);
    });
  }

  private release(worker: Worker): void {
    const next = this.waiting.shift();
    if (next) next(worker);
    else if (this.closed) void worker.terminate().catch(() => undefined);
    else this.idle.push(worker);
  }
}

export { PSM };
