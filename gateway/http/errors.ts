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
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DEADLINE_EXCEEDED]: 504,
  [GrpcStatus.CANCELLED]: 503,
};

export function httpErrorFromRemote(err: RemoteCallError, upgradeUrl: string): HttpError {
  const status = HTTP_STATUS_OF_GRPC[err.status] ?? 500;
  const extra: Record<string, unknown> = {};
  if (err.detail.field) extra.field = err.detail.field;
  if (status === 402) extra.upgrade_url = upgradeUrl;
  if (status >= 500) return new HttpError(status, err.detail.code || 'internal_error', status === 503 ? 'a service is unavailable; retry later' : 'internal error');
  return new HttpError(status, err.detail.code || 'error', err.detail.message || 'request failed', extra);
}
