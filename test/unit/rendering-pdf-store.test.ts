// The PDF store keeps the most recently used PDFs in memory within a byte budget (docs/rendering.md):
// a kept PDF is served without reading the blob store; the least recently used leave first.
import { blobPdfStore } from '../../services/rendering/adapters/blob-pdf-store';
import { Readable } from 'node:stream';
import { BlobStore } from '../../services/shared/blobs/port';

function blobs() {
  const files = new Map<string, Buffer>();
  let reads = 0;
  const store: BlobStore = {
    put: async (key, data) => void files.set(key, data),
    get: async (key) => (reads++, files.has(key) ? { data: files.get(key)!, contentType: 'application/pdf' } : null),
    putStream: async (key, source) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of source) chunks.push(chunk);
      files.set(key, Buffer.concat(chunks));
      return { size: files.get(key)!.length };
    },
    openStream: async (key) => (reads++, files.has(key) ? { stream: Readable.from([files.get(key)!]), contentType: 'application/pdf', size: files.get(key)!.length } : null),
    delete: async (key) => void files.delete(key),
    signedUrl: async (key) => `file://${key}`,
  };
  return { store, files, reads: () => reads };
}

const pdf = (size: number, fill: number) => Buffer.alloc(size, fill);

describe('PDF store: recently used PDFs kept in memory', () => {
  it('a PDF just stored or read is served again without reading the blob store', async () => {
    const b = blobs();
    const pdfs = blobPdfStore(b.store, { cacheBytes: 1000 });
    await pdfs.put('pdfs/1/live/a.pdf', pdf(100, 1));
    expect((await pdfs.get('pdfs/1/live/a.pdf'))?.equals(pdf(100, 1))).toBe(true);
    expect(b.reads()).toBe(0);
    b.files.set('pdfs/1/live/b.pdf', pdf(100, 2)); // stored by another replica
    await pdfs.get('pdfs/1/live/b.pdf');
    await pdfs.get('pdfs/1/live/b.pdf');
    expect(b.reads()).toBe(1);
  });

  it('stays within its byte budget, the least recently used leaving first; misses are not kept', async () => {
    const b = blobs();
    const pdfs = blobPdfStore(b.store, { cacheBytes: 1000 });
    await pdfs.put('k1', pdf(240, 1));
    await pdfs.put('k2', pdf(240, 2));
    await pdfs.put('k3', pdf(240, 3));
    await pdfs.get('k1'); // k2 is now the least recently used
    await pdfs.put('k4', pdf(240, 4)); // 960 bytes: all fit
    await pdfs.put('k5', pdf(240, 5)); // over budget: k2 leaves
    expect(b.reads()).toBe(0);
    await pdfs.get('k2');
    expect(b.reads()).toBe(1);
    expect(await pdfs.get('missing')).toBeNull();
    expect(await pdfs.get('missing')).toBeNull();
    expect(b.reads()).toBe(3);
  });

  it('a PDF larger than a quarter of the budget is never kept; a budget of 0 keeps nothing', async () => {
    const b = blobs();
    const pdfs = blobPdfStore(b.store, { cacheBytes: 1000 });
    await pdfs.put('big', pdf(300, 1));
    await pdfs.get('big');
    expect(b.reads()).toBe(1);
    const none = blobPdfStore(b.store, { cacheBytes: 0 });
    await none.put('small', pdf(10, 1));
    await none.get('small');
    expect(b.reads()).toBe(2);
  });
});
