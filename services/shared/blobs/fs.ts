// Embedded adapter of the blob-store port: files under DATA_DIR/blobs, content type in a sidecar file.
// Signed URLs point at the embedded gateway's /blobs/ route and carry an HMAC of key and expiry.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile, rename } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertBlobKey, Blob, BlobStore, BlobStream } from './port';

export class FsBlobStore implements BlobStore {
  constructor(private readonly root: string, private readonly secret: string, private baseUrl = 'http://127.0.0.1') {}

  /** The public origin signed URLs use; known once the HTTP server listens. */
  setBaseUrl(baseUrl: string): void {
    this.baseUrl = baseUrl.replace(/\/$/, '');
  }

  private file(key: string): string {
    assertBlobKey(key);
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    const file = this.file(key);
    await mkdir(path.dirname(file), { recursive: true });
    // Write then rename, so a reader never sees half a file.
    await writeFile(`${file}.tmp`, data);
    await writeFile(`${file}.type`, contentType);
    await rename(`${file}.tmp`, file);
  }

  async putStream(key: string, source: AsyncIterable<Uint8Array>, contentType: string): Promise<{ size: number }> {
    const file = this.file(key);
    await mkdir(path.dirname(file), { recursive: true });
    // A temporary name of its own: a failed write removes only its own bytes, and the rename publishes
    // the whole file at once (never half of it under the key).
    const partial = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    let size = 0;
    try {
      await pipeline(
        Readable.from(source),
        async function* (chunks: AsyncIterable<Uint8Array>) {
          for await (const chunk of chunks) {
            size += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(partial),
      );
      await writeFile(`${file}.type`, contentType);
      await rename(partial, file);
      return { size };
    } catch (err) {
      await rm(partial, { force: true });
      throw err;
    }
  }

  async openStream(key: string): Promise<BlobStream | null> {
    const file = this.file(key);
    try {
      const [info, contentType] = await Promise.all([stat(file), readFile(`${file}.type`, 'utf8')]);
      return { stream: createReadStream(file), contentType, size: info.size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async get(key: string): Promise<Blob | null> {
    const file = this.file(key);
    try {
      const [data, contentType] = await Promise.all([readFile(file), readFile(`${file}.type`, 'utf8')]);
      return { data, contentType };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.file(key);
    await Promise.all([rm(file, { force: true }), rm(`${file}.type`, { force: true })]);
  }

  private sign(key: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest('base64url');
  }

  async signedUrl(key: string, ttlSeconds: number): Promise<string> {
    assertBlobKey(key);
    const expires = Math.floor(Date.now() / 1000) + ttlSeconds;
    return `${this.baseUrl}/blobs/${key}?expires=${expires}&signature=${this.sign(key, expires)}`;
  }

  /** Checks a signed URL's parts; the embedded gateway serves the blob only when this holds. */
  verify(key: string, expires: string, signature: string): boolean {
    if (!/^\d{1,12}$/.test(expires) || Number(expires) < Date.now() / 1000) return false;
    try {
      assertBlobKey(key);
    } catch {
      return false;
    }
    const expected = Buffer.from(this.sign(key, Number(expires)));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
