// PDFs: the text layer as positioned lines, and the page images of scanned (image-only) PDFs.
// Scans are rasterised by taking each page's embedded image (a scanner or a phone app writes one image
// per page): no renderer binary, no canvas; vector-only pages without text are not OCR'd (docs/extraction.md).
import { ExtractionFailure } from '../ports/extractor';
import { Line, linesFromWords, Word } from '../domain/extraction/layout';
import { loadPdfJs, PdfDocument, PdfImage, PdfPage } from './pdfjs';
import { abortable, checkAborted } from './limits';

export interface PdfLimits {
  maxPages: number;
  maxPixels: number;
}

export async function openPdf(bytes: Uint8Array, limits: PdfLimits, signal?: AbortSignal): Promise<PdfDocument> {
  const pdfjs = await loadPdfJs();
  // PDF.js detaches the buffer it is given; hand it a copy so the caller's bytes stay intact.
  const task = pdfjs.getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, useSystemFonts: false, disableFontFace: true, verbosity: 0, stopAtErrors: false });
  let doc: PdfDocument;
  try {
    doc = await abortable(task.promise, signal, () => void task.destroy());
  } catch (error) {
    if (error instanceof ExtractionFailure) throw error;
    throw new ExtractionFailure('unreadable', `the PDF cannot be read: ${(error as Error).message}`);
  }
  if (doc.numPages > limits.maxPages) {
    await doc.destroy();
    throw new ExtractionFailure('too_many_pages', `the PDF has ${doc.numPages} pages; at most ${limits.maxPages} are read`);
  }
  return doc;
}

/** The text layer of every page as lines; pages without text give no lines. */
export async function textLines(doc: PdfDocument, signal?: AbortSignal): Promise<Line[][]> {
  const pages: Line[][] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    checkAborted(signal);
    const page = await doc.getPage(n);
    const { width, height } = page.getViewport({ scale: 1 });
    const content = await page.getTextContent();
    const words: Word[] = content.items
      .filter((item) => typeof item.str === 'string' && item.str.trim() !== '')
      .map((item) => {
        const size = Math.hypot(item.transform[2], item.transform[3]) || item.height || 10;
        return { text: item.str!, x0: item.transform[4], x1: item.transform[4] + item.width, y: height - item.transform[5], height: size };
      });
    pages.push(linesFromWords(words, n, width));
    page.cleanup();
  }
  return pages;
}

/** The largest embedded image of a page, as raw pixels; null when the page has none. Refuses images
 * above `maxPixels` before PDF.js decodes them into memory. */
export async function pageImage(page: PdfPage, maxPixels: number, signal?: AbortSignal): Promise<PdfImage | null> {
  const pdfjs = await loadPdfJs();
  const ops = await abortable(page.getOperatorList(), signal);
  let best: PdfImage | null = null;
  for (let i = 0; i < ops.fnArray.length; i++) {
    if (ops.fnArray[i] !== pdfjs.OPS.paintImageXObject) continue;
    const key = ops.argsArray[i][0] as string;
    const image = await abortable(new Promise<PdfImage>((resolve) => page.objs.get(key, (img) => resolve(img as PdfImage))), signal);
    if (!image || !image.data) continue;
    if (image.width * image.height > maxPixels) throw new ExtractionFailure('too_large', `a page image has ${image.width}×${image.height} pixels`);
    if (!best || image.width * image.height > best.width * best.height) best = image;
  }
  return best;
}
