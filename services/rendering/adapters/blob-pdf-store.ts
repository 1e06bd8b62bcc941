// The PdfStore port over the blob port: files under DATA_DIR (embedded) or MinIO (distributed), with
// the most recently used PDFs also kept in memory up to a byte budget. A key names one ETag, whose PDF
// never changes, so a kept copy is never stale; it saves a file read (a MinIO GET distributed) per
// download of a popular document.
import { BlobStore } from '../../shared/blobs/port';
import { PdfStore } from '../ports/pdf-store';

export function blobPdfStore(blobs: BlobStore, options: { cacheBytes?: number } = {}): PdfStore {
  const budget = options.cacheBytes ?? 16 * 1024 * 1024;
  const kept = new Map<string, Buffer>();
  let bytes = 0;
  const keep = (key: string, pdf: Buffer) => {
    if (pdf.length > budget / 4) return; // one large file must not push out everything else
    const old = kept.get(key);
    if (old) {
      kept.delete(key);
      bytes -= old.length;
    }
    kept.set(key, pdf);
    bytes += pdf.length;
    for (const [oldest, data] of kept) {
      if (bytes <= budget) break;
      kept.delete(oldest);
      bytes -= data.length;
    }
  };
  return {
    get: async (key) => {
      const hit = kept.get(key);
      if (hit) {
        keep(key, hit); // most recently used
        return hit;
      }
      const pdf = (await blobs.get(key))?.data ?? null;
      if (pdf) keep(key, pdf);
      return pdf;
    },
    put: async (key, pdf) => {
      await blobs.put(key, pdf, 'application/pdf');
      keep(key, pdf);
    },
  };
}
