// Request limits (spec §8): fixed windows per credential, one edge-state round trip per request.
// Every /api/v1 response carries X-RateLimit-Limit, -Remaining and -Reset (seconds until the window
// ends); a 429 also carries Retry-After (the same number of seconds) and the JSON error body.
import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { bearerToken, looksLikeJwt, parseApiToken } from '../../services/shared/credentials';
import { Logger } from '../../services/shared/logger';
import { HttpError } from '../http/errors';
import { EdgeConfig } from './config';
import { EdgeState } from './ports/edge-state';

/** GET …/invoices/<id>/pdf (and the same route of credit notes, proformas and quotes) has its own
 * budget (30/min), not counted in the general one. Matched on the raw URL below the /api/v1 mount
 * (query string allowed) to spare a URL parse per request. */
const PDF_URL = /^\/accounts\/[^/?]+\/(?:invoices|credit_notes|proformas|quotes)\/[^/?]+\/pdf\/?(?:\?|$)/i; // routing is case-insensitive too
export interface RateLimitBucket {
  /** Counter key: bucket name and subject (credential hash or client IP). */
  key: string;
  limit: number;
}

/**
 * Which counter a request is charged to. The subject is the credential, identified by a hash of the
 * bearer token before it is resolved (so a flood never reaches the identity service); requests
 * without a well-formed token (they all end in 401, or are sign-ins) are counted per client IP.
 */
/** token → its counter subject ('' when malformed); bounded, dropped wholesale when full. */
const subjects = new Map<string, string>();

function credentialSubject(token: string): string {
  let subject = subjects.get(token);
  if (subject === undefined) {
    subject = parseApiToken(token) || looksLikeJwt(token) ? createHash('sha256').update(token).digest('base64url') : '';
    if (subjects.size >= 10_000) subjects.clear();
    subjects.set(token, subject);
  }
  return subject;
}

export function bucketOf(req: Request, config: EdgeConfig['rateLimit']): RateLimitBucket {
  const token = bearerToken(req.headers.authorization);
  const credential = token ? credentialSubject(token) : '';
  if (credential) {
    const pdf = (req.method === 'GET' || req.method === 'HEAD') && PDF_URL.test(req.url);
    return pdf ? { key: `pdf:${credential}`, limit: config.pdf } : { key: `api:${credential}`, limit: config.general };
  }
  return { key: `ip:${req.socket.remoteAddress ?? 'unknown'}`, limit: config.anonymous };
}

export function rateLimiter(state: EdgeState, config: EdgeConfig['rateLimit'], log: Logger): RequestHandler {
  let lastFailureLog = 0;
  return (req: Request, res: Response, next: NextFunction) => {
    const bucket = bucketOf(req, config);
    state.hit(bucket.key, config.windowMs).then(
      ({ count, resetMs }) => {
        const reset = String(Math.ceil(resetMs / 1000));
        res.setHeader('X-RateLimit-Limit', String(bucket.limit));
        res.setHeader('X-RateLimit-Remaining', String(Math.max(0, bucket.limit - count)));
        res.setHeader('X-RateLimit-Reset', reset);
        if (count <= bucket.limit) return next();
        res.setHeader('Retry-After', reset);
        next(
          new HttpError(429, 'rate_limited', `rate limit of ${bucket.limit} requests per ${Math.round(config.windowMs / 1000)} s exceeded; retry in ${reset} s`),
        );
      },
      (err: unknown) => {
        // Fail open: an unreachable edge state must not take the API down; the request goes on unlimited.
        const now = Date.now();
        if (now - lastFailureLog > 10_000) {
          lastFailureLog = now;
          log.error({ err: err instanceof Error ? err.message : String(err) }, 'rate limiter unavailable; requests pass unlimited');
        }
        next();
      },
    );
  };
}
