// Receives a multipart/form-data upload (POST …/expenses/upload) with busboy, in bounded memory: the one
// file (field `file`) is spooled to a private temporary file while its fingerprint is hashed, then
// streamed to the service in 64 KiB chunks. Why a spool and not a straight pipe: the Idempotency-Key
// guard must know the request's fingerprint — which covers the file's bytes — before the request may
// execute (a replay, a conflict or an in-progress key must not reach the service), and memory is no
// place for 10 MB per concurrent upload. The spool is deleted when the request ends, however it ends.
//
// Refusals: 415 when the body is not multipart/form-data; 400 `file_missing` without a file in field
// `file`, 400 `too_many_files` for more than one file; 422 `file_too_large` at the first byte past
// 10 MB (reading stops there and the connection is closed); 400 `upload_incomplete` when the client
// goes away or the form breaks off mid-body (nothing reaches the service, nothing is stored).
import Busboy from 'busboy';
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Request } from 'express';
import { MultipartFingerprint } from '../edge/fingerprint';
import { HttpError } from './errors';

export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** The form around the file: part headers, boundaries and small fields. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
const CHUNK_BYTES = 64 * 1024;
const SPOOL_DIR = path.join(os.tmpdir(), 'invoicing-uploads');

export interface ReceivedUpload {
  filename: string;
  /** The part's Content-Type as sent; null when the part had none. */
  declaredType: string | null;
  size: number;
  /** sha256 of method, path and every part (names, headers, bytes), boundary excluded. */
  fingerprint: string;
  /** The file's bytes in chunks, from the spool (may be read once). */
  chunks(): AsyncIterable<Buffer>;
  /** Deletes the spool; idempotent. */
  discard(): Promise<void>;
}

const tooLarge = () =>
  new HttpError(422, 'file_too_large', `the file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB`, { field: 'file' }, { connection: 'close' });

export async function receiveUpload(req: Request): Promise<ReceivedUpload> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw new HttpError(415, 'unsupported_media_type', 'send the file as multipart/form-data, in field `file`', { field: 'Content-Type' });
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_FILE_BYTES + FORM_OVERHEAD_BYTES) throw tooLarge();
  await mkdir(SPOOL_DIR, { recursive: true, mode: 0o700 });
  const spool = path.join(SPOOL_DIR, randomUUID());
  const discard = () => rm(spool, { force: true });
  const fingerprint = new MultipartFingerprint(req.method, req.originalUrl);

  return new Promise<ReceivedUpload>((resolve, reject) => {
    let files = 0;
    let found: { filename: string; declaredType: string | null; size: number } | undefined;
    let writing: Promise<void> = Promise.resolve();
    let settled = false;
    let busboy: Busboy.Busboy;
    try {
      busboy = Busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fileSize: MAX_FILE_BYTES, files: 1, fields: 50, fieldSize: 64 * 1024, parts: 60 } });
    } catch {
      reject(new HttpError(400, 'bad_request', 'the multipart body has no boundary'));
      return;
    }
    const fail = (err: HttpError) => {
      if (settled) return;
      settled = true;
      req.unpipe(busboy);
      // Stop reading: the rest of the body is never read (the answer closes the connection when needed).
      if (err.code !== 'upload_incomplete') req.resume();
      void writing.finally(discard);
      reject(err);
    };
    busboy.on('field', (name, value, info) => fingerprint.field(name, value, info.mimeType));
    busboy.on('file', (name, stream, info) => {
      files++;
      if (name !== 'file' || files > 1) {
        stream.resume();
        return;
      }
      // A part without Content-Type is text/plain (RFC 7578), which no allowed file is: send the type,
      // or application/octet-stream to let the service tell it from the bytes.
      const record = { filename: info.filename ?? '', declaredType: info.mimeType || null, size: 0 };
      found = record;
      fingerprint.fileStart(name, record.filename, info.mimeType);
      const out = createWriteStream(spool, { mode: 0o600 });
      writing = new Promise((done, failed) => {
        out.on('finish', done);
        out.on('error', failed);
      });
      stream.on('data', (chunk: Buffer) => {
        record.size += chunk.length;
        fingerprint.fileData(chunk);
        if (!out.write(chunk)) {
          stream.pause();
          out.once('drain', () => stream.resume());
        }
      });
      stream.on('limit', () => fail(tooLarge()));
      stream.on('end', () => out.end());
      stream.on('error', () => out.destroy());
    });
    busboy.on('filesLimit', () => fail(new HttpError(400, 'too_many_files', 'send one file per upload, in field `file`', { field: 'file' })));
    busboy.on('error', () => fail(new HttpError(400, 'upload_incomplete', 'the upload was not received completely')));
    busboy.on('close', () => {
      if (settled) return;
      writing.then(
        () => {
          if (settled) return;
          if (files > 1) return fail(new HttpError(400, 'too_many_files', 'send one file per upload, in field `file`', { field: 'file' }));
          if (!found) return fail(new HttpError(400, 'file_missing', 'the upload has no file in field `file`', { field: 'file' }));
          settled = true;
          const file = found;
          resolve({
            ...file,
            fingerprint: fingerprint.digest(),
            chunks: () => createReadStream(spool, { highWaterMark: CHUNK_BYTES }),
            discard,
          });
        },
        () => fail(new HttpError(400, 'upload_incomplete', 'the upload could not be received')),
      );
    });
    const aborted = () => fail(new HttpError(400, 'upload_incomplete', 'the upload was not received completely'));
    req.on('aborted', aborted);
    req.on('error', aborted);
    req.pipe(busboy);
  });
}
