// The gateway's own 5xx answers say what a client should do (docs/decisions.md, "The reference"): a
// call past its deadline is 504 gateway_timeout — retryable, the request may have taken effect — not
// an "internal error"; an idempotency store that cannot be reached is 503 with Retry-After, like
// every 503 the OpenAPI document describes.
import { status } from '@grpc/grpc-js';
import { IdempotencyGuard } from '../../gateway/edge/idempotency';
import type { EdgeState } from '../../gateway/edge/ports/edge-state';
import { HttpError, httpErrorFromRemote } from '../../gateway/http/errors';
import { RemoteCallError } from '../../services/shared/grpc/errors';
import type { Logger } from '../../services/shared/logger';

describe('504: a service call past its deadline', () => {
  it('is gateway_timeout, telling the client to retry (with the same Idempotency-Key)', () => {
    const err = httpErrorFromRemote(new RemoteCallError(status.DEADLINE_EXCEEDED, { code: 'internal_error', message: 'Deadline exceeded', field: '', metadata: {} }), 'https://x');
    expect(err).toMatchObject({ status: 504, code: 'gateway_timeout' });
    expect(err.message).toMatch(/retry/);
  });
});

describe('503 idempotency_unavailable', () => {
  it('carries Retry-After', async () => {
    const unreachable = { begin: () => Promise.reject(new Error('connect ECONNREFUSED')) } as unknown as EdgeState;
    const log = { error: () => undefined, warn: () => undefined } as unknown as Logger;
    const guard = new IdempotencyGuard(unreachable, { ttlMs: 60_000, leaseMs: 5_000 }, log);
    const failure = await guard.run({ credentialId: 'c1', key: 'k1', fingerprint: 'f', requestId: 'req_1' }, () => Promise.resolve({ status: 201, headers: {} })).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(HttpError);
    expect(failure).toMatchObject({ status: 503, code: 'idempotency_unavailable', headers: { 'retry-after': '1' } });
  });
});
