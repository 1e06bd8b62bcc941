// The PdfStore port over the blob port: files under DATA_DIR (embedded) or MinIO (distributed).
import { BlobStore } from '../../shared/blobs/port';
import { PdfStore } from '../ports/pdf-store';

export function blobPdfStore(blobs: BlobStore): PdfStore {
  return {
    get: async (key) => (await blobs.get(key))?.data ?? null,
    put: (key, pdf) => blobs.put(key, pdf, 'application/pdf'),
  };
}
