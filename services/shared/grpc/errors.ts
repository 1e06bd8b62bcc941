// DomainError ⇄ gRPC status. The detail travels in the `invoicing-error-bin` trailer as
// invoicing.common.v1.ErrorDetail; the gateway maps the status code to HTTP.
import * as grpc from '@grpc/grpc-js';
import { ErrorDetail } from '../../../gen/invoicing/common/v1/common';
import { DomainError, ErrorKind, fail } from '../errors';
import { StoreUnavailable, UniqueViolation, VersionConflict } from '../store/port';

export const ERROR_TRAILER = 'invoicing-error-bin';

const STATUS_OF: Record<ErrorKind, grpc.status> = {
  invalid_argument: grpc.status.INVALID_ARGUMENT,
  failed_precondition: grpc.status.FAILED_PRECONDITION,
  not_found: grpc.status.NOT_FOUND,
  already_exists: grpc.status.ALREADY_EXISTS,
  aborted: grpc.status.ABORTED,
  permission_denied: grpc.status.PERMISSION_DENIED,
  unauthenticated: grpc.status.UNAUTHENTICATED,
  resource_exhausted: grpc.status.RESOURCE_EXHAUSTED,
  unavailable: grpc.status.UNAVAILABLE,
  deadline_exceeded: grpc.status.DEADLINE_EXCEEDED,
  internal: grpc.status.INTERNAL,
};

function asDomainError(err: unknown): DomainError | undefined {
  if (err instanceof DomainError) return err;
  if (err instanceof UniqueViolation) return new DomainError('already_exists', 'already_exists', 'a record with the same unique value exists');
  if (err instanceof VersionConflict) return new DomainError('aborted', 'concurrent_modification', 'the record was changed concurrently; retry');
  // The database down or restarting: UNAVAILABLE, so the gateway answers 503 with Retry-After (never a 500).
  if (err instanceof StoreUnavailable) return fail.unavailable('service_unavailable', 'the database is unavailable; retry later', 1);
  return undefined;
}

/** Builds the error a handler passes to its callback; unexpected errors become INTERNAL without detail. */
export function toServiceError(err: unknown): { error: Partial<grpc.ServiceError>; expected: boolean } {
  const domain = asDomainError(err);
  if (!domain) {
    return { error: { code: grpc.status.INTERNAL, details: 'internal error' }, expected: false };
  }
  const metadata = new grpc.Metadata();
  metadata.set(
    ERROR_TRAILER,
    Buffer.from(
      ErrorDetail.encode({ code: domain.code, message: domain.message, field: domain.field ?? '', metadata: domain.metadata }).finish(),
    ),
  );
  return { error: { code: STATUS_OF[domain.kind], details: domain.message, metadata }, expected: true };
}

/** A failed call as the caller sees it: the gRPC status plus the service's error detail. */
export class RemoteCallError extends Error {
  constructor(readonly status: grpc.status, readonly detail: ErrorDetail) {
    super(detail.message || `gRPC status ${status}`);
    this.name = 'RemoteCallError';
  }
}

export function fromServiceError(err: grpc.ServiceError): RemoteCallError {
  const raw = err.metadata?.get(ERROR_TRAILER)?.[0];
  const detail = raw instanceof Buffer
    ? ErrorDetail.decode(raw)
    : { code: err.code === grpc.status.UNAVAILABLE ? 'service_unavailable' : 'internal_error', message: err.details || 'internal error', field: '', metadata: {} };
  return new RemoteCallError(err.code, detail);
}

/**
 * A peer's failure as this service's own DomainError, for a service that calls another and passes its
 * refusal on (a 422 of the contacts service stays a 422, never an INTERNAL); INTERNAL stays internal.
 */
export function toDomainError(err: RemoteCallError): DomainError {
  const kind = (Object.keys(STATUS_OF) as ErrorKind[]).find((k) => STATUS_OF[k] === err.status) ?? 'internal';
  return new DomainError(kind, err.detail.code || 'internal_error', err.detail.message, err.detail.field || undefined, err.detail.metadata ?? {});
}
