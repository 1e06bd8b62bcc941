// Request limits (spec §8): fixed windows, one edge-state round trip per request with a credential
// this gateway has already verified. Every /api/v1 response carries X-RateLimit-Limit, -Remaining and
// -Reset (seconds until the window ends); a 429 also carries Retry-After (the same number of seconds)
// and the JSON error body.
//
// Which budget (docs/edge.md, "Rate limits by route class"): the one of the route the request matched
// (RouteSpec.rateClass), so the limiter runs after routing, as a step of the matched route (express's
// router and the lean lane alike) — never a pattern over the URL's text, which has more spellings of
// one route (case, trailing slash, encodings, fragments) than a pattern keeps up with. A request that
// matches no route (404) is charged to the general budget.
//
// Who is charged: a credential only once it is known valid — a token is just a string a client chose,
// and charging "its" counter let a client rotating made-up tokens go unlimited. Everything else — no or
// a malformed credential, sign-ins, a credential identity refuses — is charged to the client address
// (TRUST_PROXY decides what that is). A credential not yet verified by this gateway is first charged to
// the address (so a flood of guesses is refused before it reaches identity) and, once identity vouches
// for it, refunded there and charged to itself.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { Principal } from '../../gen/invoicing/identity/v1/identity';
import { bearerToken, looksLikeJwt, parseApiToken } from '../../services/shared/credentials';
import { RemoteCallError } from '../../services/shared/grpc/errors';
import { Logger } from '../../services/shared/logger';
import { PrincipalCache } from '../auth/principals';
import { HttpError } from '../http/errors';
import type { RateClass } from '../routes/route';
import { clientAddress } from './client-address';
import { EdgeConfig } from './config';
import { observedOf } from '../http/observe';
import { countRateLimit } from './metrics';
import { EdgeState, WindowCount } from './ports/edge-state';

export interface RateLimitBucket {
  /** Counter key: bucket name and subject (credential id or client address). */
  key: string;
  limit: number;
}

type Limits = EdgeConfig['rateLimit'];

/** The bucket of a credential identity has vouched for, for a route of `rateClass` (not `sign_in`). */
export function credentialBucket(rateClass: RateClass, principal: Principal, config: Limits): RateLimitBucket {
  return rateClass === 'pdf' ? { key: `pdf:${principal.credential_id}`, limit: config.pdf } : { key: `api:${principal.credential_id}`, limit: config.general };
}

/** The bucket of requests without a valid credential: the client address. */
export function addressBucket(req: Request, config: Limits): RateLimitBucket {
  return { key: `ip:${clientAddress(req, config.trustProxy)}`, limit: config.anonymous };
}

/** A refusal that says the credential is not valid (as opposed to identity being unreachable). */
function isInvalidCredential(err: unknown): boolean {
  return (err instanceof HttpError && err.status === 401) || (err instanceof RemoteCallError && err.status === GrpcStatus.UNAUTHENTICATED);
}

/** Sets the X-RateLimit-* headers; true when the request is within the limit. */
export function applyWindow(res: Response, bucket: { limit: number }, { count, resetMs }: WindowCount): boolean {
  res.setHeader('X-RateLimit-Limit', String(bucket.limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, bucket.limit - count)));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil(resetMs / 1000)));
  return count <= bucket.limit;
}

/** The limiter: `forClass(c)` is the step that charges a request of a route of class `c` (made once per route). */
export interface RateLimiter {
  forClass(rateClass: RateClass): RequestHandler;
}

export function rateLimiter(state: EdgeState, config: Limits, log: Logger, principals: PrincipalCache): RateLimiter {
  let lastFailureLog = 0;
  const unavailable = (err: unknown) => {
    // Fail open: an unreachable edge state must not take the API down; the request goes on unlimited.
    const now = Date.now();
    if (now - lastFailureLog > 10_000) {
      lastFailureLog = now;
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'rate limiter unavailable; requests pass unlimited');
    }
  };
  const refused = (res: Response, bucket: RateLimitBucket) => {
    const reset = String(res.getHeader('X-RateLimit-Reset'));
    res.setHeader('Retry-After', reset);
    return new HttpError(429, 'rate_limited', `rate limit of ${bucket.limit} requests per ${Math.round(config.windowMs / 1000)} s exceeded; retry in ${reset} s`);
  };

  /** Charges `bucket`; resolves true when the request may go on (within the limit, or the state is down). */
  const charge = async (res: Response, bucket: RateLimitBucket): Promise<boolean> => {
    let window: WindowCount;
    try {
      window = await state.hit(bucket.key, config.windowMs);
    } catch (err) {
      unavailable(err);
      countRateLimit(bucket.key, 'failed_open');
      return true;
    }
    const allowed = applyWindow(res, bucket, window);
    countRateLimit(bucket.key, allowed ? 'allowed' : 'limited');
    return allowed;
  };

  /** A credential this gateway has not verified yet: the address pays for the lookup unless it is valid. */
  const unverified = async (req: Request, res: Response, rateClass: RateClass): Promise<void> => {
    const address = addressBucket(req, config);
    if (!(await charge(res, address))) throw refused(res, address);
    let principal: Principal;
    try {
      principal = await principals.resolve(req.headers.authorization, res.locals.requestId as string);
    } catch (err) {
      // An invalid credential stays charged to the address; identity being unreachable is nobody's fault.
      if (!isInvalidCredential(err)) await state.refund(address.key).catch(unavailable);
      throw err;
    }
    await state.refund(address.key).catch(unavailable);
    observedOf(res).credentialId = principal.credential_id;
    const bucket = credentialBucket(rateClass, principal, config);
    if (!(await charge(res, bucket))) throw refused(res, bucket);
  };

  const forClass = (rateClass: RateClass): RequestHandler => {
    // Sign-in is how a client gets a credential: always charged to its address, whatever it carries.
    const byAddress = rateClass === 'sign_in';
    return (req: Request, res: Response, next: NextFunction) => {
      const principal = byAddress ? undefined : principals.cached(req.headers.authorization);
      if (principal) {
        // The common case: a credential verified within the cache TTL, one round trip.
        observedOf(res).credentialId = principal.credential_id;
        const bucket = credentialBucket(rateClass, principal, config);
        charge(res, bucket).then((ok) => next(ok ? undefined : refused(res, bucket)), next);
        return;
      }
      const token = byAddress ? undefined : bearerToken(req.headers.authorization);
      if (token && (parseApiToken(token) || looksLikeJwt(token))) {
        unverified(req, res, rateClass).then(() => next(), next);
        return;
      }
      const bucket = addressBucket(req, config);
      charge(res, bucket).then((ok) => next(ok ? undefined : refused(res, bucket)), next);
    };
  };
  return { forClass };
}
