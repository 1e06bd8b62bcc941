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

    async function* chunksOf(data: Buffer, size: number, failAfter?: number) {
      for (let at = 0; at < data.length; at += size) {
        if (failAfter !== undefined && at >= failAfter) throw new Error('client went away');
        yield data.subarray(at, at + size);
      }
    }

    const readAll = async (stream: AsyncIterable<Buffer>) => {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      return Buffer.concat(chunks);
    };

    it('streams a write in chunks (more than one 5 MiB part) and reads it back as a stream with its size', async () => {
      const k = key();
      const data = randomBytes(11 * 1024 * 1024 + 123);
      expect(await blobs.putStream(k, chunksOf(data, 64 * 1024), 'application/pdf')).toEqual({ size: data.length });
      const opened = await blobs.openStream(k);
      expect(opened?.contentType).toBe('application/pdf');
      expect(opened?.size).toBe(data.length);
      expect((await readAll(opened!.stream)).equals(data)).toBe(true);
      const small = key();
      await blobs.putStream(small, chunksOf(Buffer.from('tiny'), 2), 'image/png');
      expect((await blobs.get(small))?.data.toString()).toBe('tiny');
      expect(await blobs.openStream(key())).toBeNull();
    });

    it('a streamed write whose source fails stores nothing (within the first part and after several)', async () => {
      for (const failAfter of [100_000, 6 * 1024 * 1024]) {
        const k = key();
        const data = randomBytes(8 * 1024 * 1024);
        await expect(blobs.putStream(k, chunksOf(data, 64 * 1024, failAfter), 'image/png')).rejects.toThrow('client went away');
        expect(await blobs.get(k)).toBeNull();
        expect(await blobs.openStream(k)).toBeNull();
      }
    });

    it('a failed streamed write over an existing blob keeps the old bytes', async () => {
      const k = key();
      await blobs.put(k, Buffer.from('old'), 'text/plain');
      await expect(blobs.putStream(k, chunksOf(randomBytes(200_000), 1000, 50_000), 'text/plain')).rejects.toThrow('client went away');
      expect((await blobs.get(k))?.data.toString()).toBe('old');
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
