// The blob-store port's contract, run against every adapter (filesystem embedded, MinIO real).
import { randomBytes } from 'node:crypto';
import { BlobStore } from '../../services/shared/blobs/port';
import { blobPdfStore } from '../../services/rendering/adapters/blob-pdf-store';
import { pdfKey } from '../../services/rendering/domain/render-input';

export function describeBlobContract(adapter: string, open: () => Promise<BlobStore>): void {
  describe(`blob store contract: ${adapter}`, () => {
    let blobs: BlobStore;
    const key = () => `contract/${randomBytes(4).toString('hex')}/file.bin`;

    beforeAll(async () => {
      blobs = await open();
    });

    it('stores bytes and their content type; absent keys read as null', async () => {
      const k = key();
      const data = randomBytes(70_000);
      await blobs.put(k, data, 'image/png');
      const got = await blobs.get(k);
      expect(got?.contentType).toBe('image/png');
      expect(got?.data.equals(data)).toBe(true);
      expect(await blobs.get(key())).toBeNull();
    });

    it('overwrites and deletes idempotently', async () => {
      const k = key();
      await blobs.put(k, Buffer.from('one'), 'text/plain');
      await blobs.put(k, Buffer.from('two'), 'application/pdf');
      expect((await blobs.get(k))?.data.toString()).toBe('two');
      await blobs.delete(k);
      await blobs.delete(k);
      expect(await blobs.get(k)).toBeNull();
    });

    it('keeps rendered PDFs (rendering service) under their ETag key, per tenant', async () => {
      const pdfs = blobPdfStore(blobs);
      const etag = `"${randomBytes(16).toString('base64url').slice(0, 22)}"`;
      const live = pdfKey({ account_id: 9, livemode: true }, etag);
      const sandbox = pdfKey({ account_id: 9, livemode: false }, etag);
      expect(live).not.toBe(sandbox);
      const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(5_000)]);
      expect(await pdfs.get(live)).toBeNull();
      await pdfs.put(live, pdf);
      expect((await pdfs.get(live))?.equals(pdf)).toBe(true);
      // Another replica (nothing kept in its memory) reads it from the blob store.
      expect((await blobPdfStore(blobs).get(live))?.equals(pdf)).toBe(true);
      expect((await blobs.get(live))?.contentType).toBe('application/pdf');
      expect(await pdfs.get(sandbox)).toBeNull();
    });

    it('refuses unsafe keys', async () => {
      await expect(blobs.put('../escape', Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid blob key/);
      await expect(blobs.put('/abs', Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid blob key/);
    });

    it('signed URLs serve the bytes without credentials, and only the signed key', async () => {
      const k = key();
      await blobs.put(k, Buffer.from('signed content'), 'text/plain');
      const url = await blobs.signedUrl(k, 60);
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('signed content');
      const forged = url.replace('file.bin', 'other.bin');
      expect((await fetch(forged)).status).toBeGreaterThanOrEqual(400);
    });
  });
}
