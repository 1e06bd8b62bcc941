// What makes two requests "the same request" for an idempotency key: method, path (with query) and
// the body. JSON bodies count byte for byte. A multipart body counts part by part — each part's
// headers and bytes, the file's included — but not its boundary, which clients pick at random for
// every encoding, so a retry that re-encodes the same form still matches.
import { createHash } from 'node:crypto';

export function requestFingerprint(method: string, url: string, contentType: string | undefined, body: Buffer | undefined): string {
  const hash = createHash('sha256').update(`${method.toUpperCase()} ${url}\n`);
  const parts = body && contentType && /^multipart\//i.test(contentType) ? multipartParts(contentType, body) : undefined;
  if (parts) {
    hash.update(`multipart ${parts.length}\n`);
    for (const part of parts) {
      hash.update(`${part.headers.length}:`).update(part.headers).update(`${part.body.length}:`).update(part.body);
    }
  } else if (body) {
    hash.update(body);
  }
  return hash.digest('base64url');
}

interface Part {
  headers: Buffer;
  body: Buffer;
}

/** The parts of a multipart body (RFC 2046), or undefined when it is not well formed (the raw bytes then count). */
function multipartParts(contentType: string, body: Buffer): Part[] | undefined {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) return undefined;
  for (;;) {
    let start = at + delimiter.length;
    if (body[start] === 0x2d && body[start + 1] === 0x2d) return parts; // closing delimiter "--"
    const lineEnd = body.indexOf('\r\n', start);
    if (lineEnd < 0) return undefined;
    start = lineEnd + 2;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), start);
    if (next < 0) return undefined;
    const part = body.subarray(start, next);
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) return undefined;
    parts.push({ headers: normalizeHeaders(part.subarray(0, split)), body: part.subarray(split + 4) });
    at = next + 2;
  }
}

const normalizeHeaders = (raw: Buffer) =>
  Buffer.from(
    raw
      .toString('latin1')
      .split('\r\n')
      .map((line) => line.replace(/^([^:]+):\s*/, (_, name: string) => `${name.toLowerCase()}:`).trimEnd())
      .sort()
      .join('\n'),
    'latin1',
  );

/**
 * The fingerprint of a multipart form read as a stream (the upload route spools it, never holds it):
 * method and path, then every part in order — field name, file name, declared type and bytes — but not
 * the boundary, nor how the client split its headers. A retry that re-encodes the same form matches; a
 * different file, name or type does not.
 */
export class MultipartFingerprint {
  private readonly hash;

  constructor(method: string, url: string) {
    this.hash = createHash('sha256').update(`${method.toUpperCase()} ${url}\nmultipart-stream\n`);
  }

  field(name: string, value: string, type: string): void {
    const bytes = Buffer.from(value);
    this.hash.update(`field ${JSON.stringify([name, type])} ${bytes.length}:`).update(bytes);
  }

  fileStart(name: string, filename: string, type: string): void {
    this.hash.update(`file ${JSON.stringify([name, filename, type])}:`);
  }

  fileData(chunk: Buffer): void {
    this.hash.update(chunk);
  }

  digest(): string {
    return this.hash.digest('base64url');
  }
}
