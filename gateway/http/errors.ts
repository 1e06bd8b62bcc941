// The gateway's one error model: every error leaves as {"error": {"code", "message", …}}, and gRPC
// statuses become HTTP statuses in exactly one table.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { RemoteCallError } from '../../services/shared/grpc/errors';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    /** Response headers the error carries (Retry-After of a 503). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** gRPC status → HTTP status (the single table). */
export const HTTP_STATUS_OF_GRPC: Record<number, number> = {
  [GrpcStatus.OK]: 200,
  [GrpcStatus.INVALID_ARGUMENT]: 422,
  [GrpcStatus.FAILED_PRECONDITION]: 422,
  [GrpcStatus.OUT_OF_RANGE]: 422,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  [GrpcStatus.ABORTED]: 409,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.UNAUTHENTICATED]: 401,
  // Services raise RESOURCE_EXHAUSTED only for plan limits; rate limits are the gateway's own 429.
  [GrpcStatus.RESOURCE_EXHAUSTED]: 402,
  // Also a service shedding load at once (`issuing_overloaded`: its queue is full), with its Retry-After.
  [GrpcStatus.UNAVAILABLE]: 503,
  // Past the caller's deadline (the call timed out, or the service dropped it unapplied: grpc/deadline.ts).
  [GrpcStatus.DEADLINE_EXCEEDED]: 504,
  [GrpcStatus.CANCELLED]: 503,
};

function detailsOf(json: string | undefined): unknown[] | undefined {
  if (!json) return undefined;
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function httpErrorFromRemote(err: RemoteCallError, upgradeUrl: string): HttpError {
  const status = HTTP_STATUS_OF_GRPC[err.status] ?? 500;
  const extra: Record<string, unknown> = {};
  if (err.detail.field) extra.field = err.detail.field;
  // A list of what is wrong, when a service gives one (einvoice_incomplete: [{rule, field, message}]).
  const details = detailsOf(err.detail.metadata?.details);
  if (details) extra.details = details;
  if (status === 402) extra.upgrade_url = upgradeUrl;
  if (status === 503) {
    // Every 503 says when to come back: the service's own estimate (an overloaded renderer), else 1 s.
    const retryAfter = /^\d{1,5}$/.test(err.detail.metadata?.retry_after_seconds ?? '') ? err.detail.metadata.retry_after_seconds : '1';
    // A service's DomainError message is written for clients; a transport failure's is not.
    const message = err.detail.message && err.detail.code !== 'service_unavailable' ? err.detail.message : 'a service is unavailable; retry later';
    return new HttpError(503, err.detail.code || 'service_unavailable', message, {}, { 'retry-after': retryAfter });
  }
  if (status === 504) {
    // Past the call's deadline the service may still complete the change: say so, not "internal error".
    return new HttpError(504, 'gateway_timeout', 'a service did not answer in time; the request may or may not have taken effect: retry it (with the same Idempotency-Key)');
  }
  if (status >= 500) return new HttpError(status, err.detail.code || 'internal_error', 'internal error');
  return new HttpError(status, err.detail.code || 'error', err.detail.message || 'request failed', extra);
}
