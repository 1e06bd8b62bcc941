// Receives a multipart/form-data upload (POST …/expenses/upload) with busboy, in bounded memory: the one
// file (field `file`) is screened on its first bytes, then spooled to a private file (gateway/http/
// spool.ts) while its fingerprint is hashed, then streamed to the service in 64 KiB chunks. Why a spool
// and not a straight pipe: the Idempotency-Key guard must know the request's fingerprint — which covers
// the file's bytes — before the request may execute (a replay, a conflict or an in-progress key must
// not reach the service), and memory is no place for 10 MB per concurrent upload.
//
// Early refusal (docs/edge.md "Uploads"): the route's screen (the file's type, judged from its first
// 4 KiB by the rule the service applies again) runs before anything is spooled and before the rest of
// the body is read; a refusal is answered at once with `Connection: close`, and the rest is never read.
//
// Refusals: 415 when the body is not multipart/form-data; 400 `file_missing` without a file in field
// `file`, 400 `too_many_files` for more than one file; the screen's 422 (`file_type_not_allowed`,
// `file_type_mismatch`) on the first bytes; 422 `file_too_large` at the first byte past 10 MB; 408
// `upload_timeout` when the body has not arrived within UPLOAD_TIMEOUT_MS; 400 `upload_incomplete` when
// the client goes away or the form breaks off mid-body (nothing reaches the service, nothing is stored).
// Every refusal before the body is complete closes the connection. The spool file is deleted however
// the request ends.
import Busboy from 'busboy';
import type { Request } from 'express';
import type { Readable } from 'node:stream';
import { MAX_UPLOAD_BYTES, SNIFF_BYTES } from '../../services/shared/file-types';
import { MultipartFingerprint } from '../edge/fingerprint';
import { HttpError } from './errors';
import { SpoolFile, UploadSpool } from './spool';

/** The form around the file: part headers, boundaries and small fields. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
const CHUNK_BYTES = 64 * 1024;

export interface ReceivedUpload {
  filename: string;
  /** The part's Content-Type as sent; null when the part had none. */
  declaredType: string | null;
  size: number;
  /** sha256 of method, path and every part (names, headers, bytes), boundary excluded. */
  fingerprint: string;
  /** The file's bytes in chunks, from the spool (may be read once). */
  chunks(): AsyncIterable<Buffer>;
  /** Deletes the spool (closing any reader); idempotent. */
  discard(): Promise<void>;
}

/** A check of a file's first bytes (at most SNIFF_BYTES; fewer when the file is shorter): throws the refusal. */
export type UploadScreen = (head: Buffer, declaredType: string | null) => Promise<void>;

export interface ReceiveOptions {
  spool: UploadSpool;
  /** The longest the body may take to arrive (UPLOAD_TIMEOUT_MS). */
  timeoutMs: number;
  screen?: UploadScreen;
}

/** An answer given before the body was read whole: the rest is never read, so the connection cannot be reused. */
export function closingConnection(err: HttpError): HttpError {
  err.headers.connection = 'close';
  return err;
}

const refusal = (status: number, code: string, message: string, extra: Record<string, unknown> = {}) =>
  closingConnection(new HttpError(status, code, message, extra));
const tooLarge = () => refusal(422, 'file_too_large', `the file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MB`, { field: 'file' });
const incomplete = () => refusal(400, 'upload_incomplete', 'the upload was not received completely');
const tooManyFiles = () => refusal(400, 'too_many_files', 'send one file per upload, in field `file`', { field: 'file' });

export async function receiveUpload(req: Request, options: ReceiveOptions): Promise<ReceivedUpload> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw closingConnection(new HttpError(415, 'unsupported_media_type', 'send the file as multipart/form-data, in field `file`', { field: 'Content-Type' }));
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_UPLOAD_BYTES + FORM_OVERHEAD_BYTES) throw tooLarge();
  const fingerprint = new MultipartFingerprint(req.method, req.originalUrl);

  return new Promise<ReceivedUpload>((resolve, reject) => {
    let files = 0;
    let found: { filename: string; declaredType: string | null; size: number } | undefined;
    /** Settles when the file part is screened and completely spooled (rejects: already answered by fail). */
    let spooled: Promise<SpoolFile> | undefined;
    let spoolFile: SpoolFile | undefined;
    let settled = false;
    let busboy: Busboy.Busboy;
    try {
      busboy = Busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 50, fieldSize: 64 * 1024, parts: 60 } });
    } catch {
      reject(refusal(400, 'bad_request', 'the multipart body has no boundary'));
      return;
    }
    const timer = setTimeout(
      () => fail(refusal(408, 'upload_timeout', `the upload did not arrive within ${Math.ceil(options.timeoutMs / 1000)} s; send it again`)),
      options.timeoutMs,
    );
    /** Settles with a refusal (or, from a failing screen, an unexpected error: a 500, logged). */
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Stop reading: the rest of the body is never read; the answer closes the connection.
      req.unpipe(busboy);
      req.pause();
      void spoolFile?.discard();
      reject(err);
    };

    /** Screens the file's first bytes, then spools them and the rest; false when refused (already answered). */
    const receiveFile = (stream: Readable, record: { declaredType: string | null; size: number }) => {
      const head: Buffer[] = [];
      let headBytes = 0;
      let screening: Promise<boolean> | undefined;
      let ended!: () => void;
      const end = new Promise<void>((resolve) => (ended = resolve));
      const screen = (): Promise<boolean> =>
        (screening ??= (async () => {
          const bytes = Buffer.concat(head, headBytes);
          head.length = 0;
          if (bytes.length > 0 && options.screen) {
            try {
              await options.screen(bytes, record.declaredType);
            } catch (err) {
              fail(err instanceof HttpError ? closingConnection(err) : err);
              return false;
            }
          }
          if (settled) return false;
          spoolFile = options.spool.create();
          spoolFile.writer.write(bytes);
          stream.resume();
          return true;
        })());
      stream.on('data', (chunk: Buffer) => {
        record.size += chunk.length;
        fingerprint.fileData(chunk);
        if (!spoolFile) {
          head.push(chunk);
          headBytes += chunk.length;
          if (headBytes >= SNIFF_BYTES && !screening) {
            stream.pause();
            void screen();
          }
          return;
        }
        if (!spoolFile.writer.write(chunk)) {
          stream.pause();
          spoolFile.writer.once('drain', () => stream.resume());
        }
      });
      stream.on('limit', () => fail(tooLarge()));
      stream.on('end', () => ended());
      return (async () => {
        await end;
        if (!(await screen())) throw incomplete();
        const file = spoolFile!;
        await new Promise<void>((done, failed) => {
          file.writer.once('error', failed);
          file.writer.end(done);
        });
        return file;
      })();
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
      spooled = receiveFile(stream, record);
      spooled.catch(() => fail(refusal(400, 'upload_incomplete', 'the upload could not be received')));
    });
    busboy.on('filesLimit', () => fail(tooManyFiles()));
    busboy.on('error', () => fail(incomplete()));
    busboy.on('close', () => {
      if (settled) return;
      if (files > 1) return fail(tooManyFiles());
      if (!found || !spooled) return fail(refusal(400, 'file_missing', 'the upload has no file in field `file`', { field: 'file' }));
      const file = found;
      spooled.then((spool) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({
          ...file,
          fingerprint: fingerprint.digest(),
          chunks: () => spool.read(CHUNK_BYTES),
          discard: () => spool.discard(),
        });
      }, () => undefined);
    });
    // The client went away before the body was complete (or the server's own request timeout cut it).
    req.on('aborted', () => fail(incomplete()));
    req.on('error', () => fail(incomplete()));
    req.on('close', () => {
      if (!req.complete) fail(incomplete());
    });
    req.pipe(busboy);
  });
}
