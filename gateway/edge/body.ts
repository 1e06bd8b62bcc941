// Reads a request body once: the raw bytes (kept for the idempotency fingerprint and for multipart
// routes, through rawBodyOf) and, for JSON content types, the parsed value.
//
// Written against node:http directly rather than body-parser, which costs a good part of a POST for
// features the API does not offer (docs/edge.md, "Request bodies"):
//   - JSON (`application/json`, `application/*+json`) is parsed strictly: an object or array; anything
//     else → 400 malformed_json. An empty (or all-whitespace) body is no body, whatever its type.
//   - Operations of the API take JSON only: a body in another media type, or without Content-Type,
//     → 415 unsupported_media_type (it used to read as {}, so a PATCH "succeeded" changing nothing).
//     Only the test-only routes (gateway/edge/test-hooks.ts) take other types, e.g. multipart.
//   - Bodies are UTF-8: another charset → 415 unsupported_charset; a Content-Encoding other than
//     identity → 415 unsupported_content_encoding (compressed request bodies are not accepted).
//   - Multipart bodies may be up to 11 MB (a 10 MB file plus the form's overhead), others up to 1 MB
//     → 413 body_too_large, refused from Content-Length before reading when it is declared.
import { isUtf8 } from 'node:buffer';
import type { Request } from 'express';
import { HttpError } from '../http/errors';

const MB = 1024 * 1024;
const JSON_TYPE = /^application\/(?:[^\s/;]+\+)?json$/;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

const rawBodies = new WeakMap<Request, Buffer>();

/** The raw bytes of a request's body, once readBody() has run; undefined for a request without body. */
export const rawBodyOf = (req: Request): Buffer | undefined => rawBodies.get(req);

function read(req: Request, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    return Promise.reject(new HttpError(413, 'body_too_large', `the request body is larger than ${limit / MB} MB`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const fail = (err: HttpError) => {
      cleanup();
      req.resume(); // drain what is left, so the answer can still be written on this connection
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) return fail(new HttpError(413, 'body_too_large', `the request body is larger than ${limit / MB} MB`));
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (declared !== undefined && Number(declared) !== length) {
        return reject(new HttpError(400, 'bad_request', 'the request body does not match its Content-Length'));
      }
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length));
    };
    const onAborted = () => fail(new HttpError(400, 'bad_request', 'the request body was not received completely'));
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAborted);
      req.off('aborted', onAborted);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAborted);
    req.on('aborted', onAborted);
  });
}

/** A `\\uD800`–`\\uDFFF` escape: the only way a JSON text can hold a lone surrogate. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether every string in a parsed JSON value is well-formed UTF-16 (no lone surrogate from a `\\ud800` escape). */
function wellFormed(value: unknown): boolean {
  if (typeof value === 'string') return !LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.every(wellFormed);
  if (value && typeof value === 'object') return Object.entries(value).every(([key, v]) => wellFormed(key) && wellFormed(v));
  return true;
}

function parseJson(raw: Buffer, text: string): unknown {
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') throw new HttpError(400, 'malformed_json', 'the request body is not a JSON object or array');
  // Stored is what was sent: bytes that are not UTF-8 would be decoded to U+FFFD and stored as such.
  if (!isUtf8(raw)) throw new HttpError(400, 'malformed_json', 'the request body is not valid UTF-8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'malformed_json', 'the request body is not valid JSON');
  }
  // A lone surrogate escape is valid JSON but no Unicode text; only bodies with such escapes are walked.
  if (SURROGATE_ESCAPE.test(text) && !wellFormed(value)) {
    throw new HttpError(400, 'malformed_json', 'the request body has a string with an unpaired surrogate (\\ud800–\\udfff)');
  }
  return value;
}

/** Whether a request carries a body at all (every GET and most DELETEs do not). */
export const hasBody = (req: Request): boolean => req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;

/** A multipart/form-data (or other multipart) body: a file. */
export const isMultipart = (req: Request): boolean => hasBody(req) && /^\s*multipart\//i.test(req.headers['content-type'] ?? '');

/**
 * Reads the body: resolves with the parsed JSON value (undefined for an empty body, for a request
 * without body and, unless `jsonOnly`, for other content types); the raw bytes are then available
 * from rawBodyOf(req).
 */
export async function readBody(req: Request, { jsonOnly = false } = {}): Promise<unknown> {
  if (!hasBody(req)) return undefined;
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    throw new HttpError(415, 'unsupported_content_encoding', 'compressed request bodies are not accepted; send them uncompressed');
  }
  const contentType = req.headers['content-type'] ?? '';
  const charset = CHARSET.exec(contentType)?.[1].toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpError(415, 'unsupported_charset', 'request bodies must be UTF-8');
  }
  const mediaType = contentType.split(';', 1)[0].trim().toLowerCase();
  const multipart = mediaType.startsWith('multipart/');
  const raw = await read(req, multipart ? 11 * MB : MB);
  rawBodies.set(req, raw);
  const text = raw.toString('utf8');
  if (!/\S/.test(text)) return undefined;
  if (JSON_TYPE.test(mediaType)) return parseJson(raw, text);
  if (jsonOnly) {
    throw new HttpError(415, 'unsupported_media_type', 'request bodies must be JSON: send Content-Type: application/json', { field: 'Content-Type' });
  }
  return undefined;
}
