// Distributed adapter of the blob-store port: MinIO (S3 API). Signed URLs are S3 presigned GETs.
import { Client } from 'minio';
import { assertBlobKey, Blob, BlobStore, BlobStream } from './port';

/** S3's smallest part but the last: a streamed write holds at most one part in memory. */
const PART_BYTES = 5 * 1024 * 1024;

export class MinioBlobStore implements BlobStore {
  private ready?: Promise<void>;

  constructor(private readonly client: Client, private readonly bucket: string) {}

  private ensureBucket(): Promise<void> {
    this.ready ??= (async () => {
      if (!(await this.client.bucketExists(this.bucket))) {
        await this.client.makeBucket(this.bucket).catch(async (err) => {
          if (!(await this.client.bucketExists(this.bucket))) throw err; // created concurrently is fine
        });
      }
    })().catch((err) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  async put(key: string, data: Buffer, contentType: string): Promise<void> {
    assertBlobKey(key);
    await this.ensureBucket();
    await this.client.putObject(this.bucket, key, data, data.length, { 'Content-Type': contentType });
  }

  /**
   * Parts of 5 MiB through an S3 multipart upload (minio-js's own putObject would buffer a stream of
   * unknown size whole); a source that ends within the first part is one plain PUT. An S3 object
   * appears only when its upload completes, so a failed source leaves nothing: the multipart upload
   * is aborted (its parts deleted).
   */
  async putStream(key: string, source: AsyncIterable<Uint8Array>, contentType: string): Promise<{ size: number }> {
    assertBlobKey(key);
    await this.ensureBucket();
    const headers = { 'Content-Type': contentType };
    let uploadId: string | undefined;
    const etags: { part: number; etag: string }[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let size = 0;
    const flushPart = async () => {
      uploadId ??= await this.client.initiateNewMultipartUpload(this.bucket, key, headers);
      const part = etags.length + 1;
      const body = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      const { etag } = await this.client.uploadPart({ bucketName: this.bucket, objectName: key, uploadID: uploadId, partNumber: part, headers: {} }, body);
      etags.push({ part, etag });
    };
    try {
      for await (const chunk of source) {
        pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        pendingBytes += chunk.length;
        size += chunk.length;
        if (pendingBytes >= PART_BYTES) await flushPart();
      }
      if (uploadId === undefined) {
        await this.client.putObject(this.bucket, key, Buffer.concat(pending, pendingBytes), pendingBytes, headers);
      } else {
        if (pendingBytes > 0) await flushPart();
        await this.client.completeMultipartUpload(this.bucket, key, uploadId, etags);
      }
      return { size };
    } catch (err) {
      if (uploadId !== undefined) await this.client.abortMultipartUpload(this.bucket, key, uploadId).catch(() => undefined);
      throw err;
    }
  }

  async openStream(key: string): Promise<BlobStream | null> {
    assertBlobKey(key);
    await this.ensureBucket();
    try {
      const stat = await this.client.statObject(this.bucket, key);
      const stream = await this.client.getObject(this.bucket, key);
      return { stream, contentType: String(stat.metaData?.['content-type'] ?? 'application/octet-stream'), size: stat.size };
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'NotFound' || code === 'NoSuchKey') return null;
      throw err;
    }
  }

  async get(key: string): Promise<Blob | null> {
    assertBlobKey(key);
    await this.ensureBucket();
    try {
      const stat = await this.client.statObject(this.bucket, key);
      const stream = await this.client.getObject(this.bucket, key);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return { data: Buffer.concat(chunks), contentType: String(stat.metaData?.['content-type'] ?? 'application/octet-stream') };
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'NotFound' || code === 'NoSuchKey') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    assertBlobKey(key);
    await this.ensureBucket();
    await this.client.removeObject(this.bucket, key);
  }

  async signedUrl(key: string, ttlSeconds: number): Promise<string> {
    assertBlobKey(key);
    await this.ensureBucket();
    return this.client.presignedGetObject(this.bucket, key, ttlSeconds);
  }
}
