// The blob-store port (logos, uploaded files, rendered PDFs). Embedded: files under DATA_DIR (fs.ts);
// distributed: MinIO (minio.ts). One contract suite (test/contract/blobs.contract.ts) runs against both.

import type { Readable } from 'node:stream';

export interface Blob {
  data: Buffer;
  contentType: string;
}

/** A stored blob opened for reading in chunks (uploads are up to 10 MB: never read them whole). */
export interface BlobStream {
  stream: Readable;
  contentType: string;
  size: number;
}

export interface BlobStore {
  put(key: string, data: Buffer, contentType: string): Promise<void>;
  /**
   * Stores what `source` yields, chunk by chunk, without holding it whole. All or nothing: when the
   * source throws (a rejected or interrupted upload), the write is abandoned, nothing is stored under
   * `key` and the source's error is rethrown.
   */
  putStream(key: string, source: AsyncIterable<Uint8Array>, contentType: string): Promise<{ size: number }>;
  /** null when absent. */
  get(key: string): Promise<Blob | null>;
  /** The blob for reading in chunks; null when absent. */
  openStream(key: string): Promise<BlobStream | null>;
  /** Idempotent. */
  delete(key: string): Promise<void>;
  /** A URL anyone can GET until it expires (`ttlSeconds`), without credentials. */
  signedUrl(key: string, ttlSeconds: number): Promise<string>;
}

const KEY_RE = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/;

/** Keys are lowercase path-like names; the check keeps them safe for every backend (no `..`, no absolute paths). */
export function assertBlobKey(key: string): void {
  if (key.length > 512 || !KEY_RE.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  }
}
