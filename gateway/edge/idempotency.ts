// Idempotency keys (spec §4 "Idempotency"): every POST may carry `Idempotency-Key`; the first
// response (status, body, Content-Type, Location, ETag, Content-Disposition) is kept 24 h per
// (credential, key) and replayed unchanged with `Idempotent-Replayed: true` and
// `X-Original-Request-Id`. Same key, different request → 409 idempotency_key_conflict; same key while
// the first still runs → 409 idempotency_in_progress. 5xx answers are not kept (a retry executes),
// nor is anything refused before execution (401, 403, 402, 404 of workspace gating, 400, 422 of
// request validation, 429, a malformed key): the guard only runs around the route's handler; nor is
// a retryable 409 (concurrent_modification, idempotency_in_progress from a service).
//
// The key also travels to the service (scopedKey(), services/shared/grpc/idempotency.ts), which records
// it with its own write: at-most-once is the service's guarantee, this record the fast replay. That is
// what lets the lease here be short (a few seconds, renewed while the handler runs): re-executing a
// request whose owner died is safe, the service answers the first result.

import { createHash, randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { Logger } from '../../services/shared/logger';
import { HttpError } from '../http/errors';
import { EdgeConfig } from './config';
import { countIdempotency } from './metrics';
import { EdgeState, IdempotencyClaim, StoredResponse } from './ports/edge-state';

export const IDEMPOTENCY_KEY_MAX = 255;
const KEY_RE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** Error codes of answers that are not final: a retry may succeed, so they are not kept under the key. */
export const RETRYABLE_CODES = new Set(['concurrent_modification', 'idempotency_in_progress']);
/** Headers that are part of a stored response; all others (request id, rate limits) belong to each answer. */
const KEPT_HEADERS = ['content-type', 'location', 'etag', 'content-disposition'];

/**
 * The request's Idempotency-Key: undefined when absent; 400 invalid_idempotency_key when empty,
 * longer than 255 characters or not printable ASCII. Only POST honours the header.
 */
export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || key.length > IDEMPOTENCY_KEY_MAX || !KEY_RE.test(key)) {
    throw new HttpError(
      400,
      'invalid_idempotency_key',
      `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} printable ASCII characters (a UUID v4 is recommended)`,
      { field: 'Idempotency-Key' },
    );
  }
  return key;
}

const HEADER_NAMES: Record<string, string> = {
  'content-type': 'Content-Type',
  location: 'Location',
  etag: 'ETag',
  'content-disposition': 'Content-Disposition',
  'idempotent-replayed': 'Idempotent-Replayed',
  'x-original-request-id': 'X-Original-Request-Id',
};

/** The conventional spelling of a lower-case header name, for answers written on the wire. */
export const headerName = (lower: string): string => HEADER_NAMES[lower] ?? lower;

/** A response as the gateway sends it: lower-case header names; body undefined for none (204). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body?: Buffer;
  /** Not final (a 5xx, a retryable 409): sent but not kept under an idempotency key. */
  retryable?: boolean;
}

/** The record key of (credential, key): keys of different credentials never meet. Also the key services record. */
export const scopedKey = (credentialId: string, key: string): string =>
  createHash('sha256').update(`${credentialId}\n${key}`).digest('base64url');

export interface IdempotentRequest {
  credentialId: string;
  key: string;
  /** From requestFingerprint(): method, path and body. */
  fingerprint: string;
  requestId: string;
}

export class IdempotencyGuard {
  constructor(
    private readonly state: EdgeState,
    private readonly config: EdgeConfig['idempotency'],
    private readonly log: Logger,
  ) {}

  /**
   * Runs `execute` at most once per (credential, key) — replaying its kept answer afterwards — or
   * throws the 409s. `execute` must turn the handler's errors into answers (it does not throw).
   */
  async run(request: IdempotentRequest, execute: () => Promise<Answer>): Promise<Answer> {
    const scope = scopedKey(request.credentialId, request.key);
    const claim: IdempotencyClaim = { fingerprint: request.fingerprint, owner: randomUUID(), requestId: request.requestId };
    const { leaseMs, ttlMs } = this.config;
    const existing = await this.state.begin(scope, claim, leaseMs).catch((err: unknown) => {
      countIdempotency('unavailable');
      throw this.unavailable(err);
    });
    if (existing.outcome !== 'started') {
      if (existing.fingerprint !== claim.fingerprint) {
        countIdempotency('mismatch');
        throw new HttpError(409, 'idempotency_key_conflict', 'this Idempotency-Key was already used with a different request (method, path or body)');
      }
      if (existing.outcome === 'running') {
        countIdempotency('in_progress');
        throw new HttpError(409, 'idempotency_in_progress', 'a request with this Idempotency-Key is still being processed; retry later');
      }
      const { response } = existing;
      countIdempotency('replayed');
      return {
        status: response.status,
        headers: { ...response.headers, 'idempotent-replayed': 'true', 'x-original-request-id': existing.requestId },
        body: response.body.length || response.status !== 204 ? response.body : undefined,
      };
    }

    // The marker lives for one lease and is renewed while the handler runs: a gateway that dies
    // mid-request leaves a marker that expires within one lease, after which a retry executes.
    const renewal = setInterval(() => {
      this.state.renew(scope, claim.owner, leaseMs).then(
        (held) => held || this.log.warn({ request_id: request.requestId }, 'idempotency lease lost while the request was running'),
        (err: unknown) => this.log.warn({ err: String(err), request_id: request.requestId }, 'idempotency lease renewal failed'),
      );
    }, Math.max(100, Math.floor(leaseMs / 3)));
    renewal.unref();
    let answer: Answer;
    try {
      answer = await execute();
    } catch (err) {
      clearInterval(renewal);
      await this.state.release(scope, claim.owner).catch(() => false);
      throw err;
    }
    clearInterval(renewal);
    countIdempotency(answer.status >= 500 || answer.retryable ? 'not_kept' : 'created');
    try {
      if (answer.status >= 500 || answer.retryable) {
        await this.state.release(scope, claim.owner);
      } else {
        const kept: StoredResponse = { status: answer.status, headers: {}, body: answer.body ?? Buffer.alloc(0) };
        for (const name of KEPT_HEADERS) if (answer.headers[name] !== undefined) kept.headers[name] = answer.headers[name];
        const stored = await this.state.complete(scope, claim, kept, ttlMs);
        if (!stored) this.log.warn({ request_id: request.requestId }, 'idempotency record taken over after the lease expired; not stored');
      }
    } catch (err) {
      // The request did execute: answer it. Its marker expires within one lease, then a retry re-executes.
      this.log.error({ err: String(err), request_id: request.requestId }, 'could not store the idempotent response');
    }
    return answer;
  }

  private unavailable(err: unknown): HttpError {
    this.log.error({ err: err instanceof Error ? err.message : String(err) }, 'idempotency store unavailable');
    // Like every 503 (gateway/http/errors.ts), it says when to come back.
    return new HttpError(503, 'idempotency_unavailable', 'idempotency keys cannot be honoured right now; retry later', {}, { 'retry-after': '1' });
  }
}
