// Distributed adapter of the blob-store port: MinIO (S3 API). Signed URLs are S3 presigned GETs.
import { Client } from 'minio';
import { assertBlobKey, Blob, BlobStore } from './port';

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
