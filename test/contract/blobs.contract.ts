// The blob-store port's contract, run against every adapter (filesystem embedded, MinIO real).
import { randomBytes } from 'node:crypto';
import { BlobStore } from '../../services/shared/blobs/port';

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
