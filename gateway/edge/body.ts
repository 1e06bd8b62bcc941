// Reads a request body once: the raw bytes (kept for the idempotency fingerprint and for multipart
// routes, through rawBodyOf) and, for JSON content types, the parsed value — with express.json's
// exact behaviour (strict, utf-* charsets, an empty body is {}, parse errors → entity.parse.failed).
// Multipart bodies may be up to 11 MB (a 10 MB file plus the form's overhead); others up to 1 MB.
import express, { Request, Response } from 'express';

const rawBodies = new WeakMap<Request, Buffer>();

/** The raw bytes of a request's body, once readBody() has run; undefined for a request without body. */
export const rawBodyOf = (req: Request): Buffer | undefined => rawBodies.get(req);

const remember = (req: Request, buf: Buffer) => {
  rawBodies.set(req, buf);
};
const json = express.json({ limit: '1mb', type: ['application/json', 'application/*+json'], verify: (req, _res, buf) => remember(req as Request, buf) });
const multipart = express.raw({ limit: '11mb', type: 'multipart/*' });
const other = express.raw({ limit: '1mb', type: () => true });

const run = (parser: express.RequestHandler, req: Request, res: Response) =>
  new Promise<void>((resolve, reject) => parser(req, res, (err?: unknown) => (err ? reject(err) : resolve())));

/**
 * Reads the body: resolves with the parsed JSON value (undefined for other content types and for
 * requests without body); the raw bytes are then available from rawBodyOf(req).
 */
export async function readBody(req: Request, res: Response): Promise<unknown> {
  // No body (every GET, most DELETEs): nothing to read, as body-parser's own hasBody() would decide.
  if (req.headers['transfer-encoding'] === undefined && req.headers['content-length'] === undefined) return undefined;
  await run(json, req, res);
  if (rawBodies.has(req)) return req.body;
  await run(/^multipart\//i.test(req.headers['content-type'] ?? '') ? multipart : other, req, res);
  if (Buffer.isBuffer(req.body)) remember(req, req.body);
  req.body = undefined;
  return undefined;
}
