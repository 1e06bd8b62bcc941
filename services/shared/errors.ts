// The one error model. Domain code throws DomainError; the gRPC layer turns its kind into a status code
// and the gateway turns that into HTTP (gateway/http/error-mapping.ts), so no layer invents its own.
export type ErrorKind =
  | 'invalid_argument'
  | 'failed_precondition'
  | 'not_found'
  | 'already_exists'
  | 'aborted'
  | 'permission_denied'
  | 'unauthenticated'
  | 'resource_exhausted'
  | 'unavailable'
  /** The caller's deadline passed before the work began: dropped unapplied (services/shared/grpc/deadline.ts). */
  | 'deadline_exceeded'
  | 'internal';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    /** Machine-readable snake_case code, returned to API clients as error.code. */
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly metadata: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const fail = {
  invalid: (code: string, message: string, field?: string) => new DomainError('invalid_argument', code, message, field),
  precondition: (code: string, message: string) => new DomainError('failed_precondition', code, message),
  notFound: (what: string) => new DomainError('not_found', 'resource_not_found', `${what} not found`),
  conflict: (code: string, message: string) => new DomainError('aborted', code, message),
  forbidden: (code: string, message: string) => new DomainError('permission_denied', code, message),
  unauthenticated: (code: string, message: string) => new DomainError('unauthenticated', code, message),
  /** A plan limit: the gateway answers 402 with upgrade_url. */
  planLimit: (code: string, message: string, metadata: Record<string, string> = {}) =>
    new DomainError('resource_exhausted', code, message, undefined, metadata),
  /** Temporarily unable to serve (overloaded, a dependency down): the gateway answers 503 with
   * Retry-After from metadata.retry_after_seconds. */
  unavailable: (code: string, message: string, retryAfterSeconds: number) =>
    new DomainError('unavailable', code, message, undefined, { retry_after_seconds: String(retryAfterSeconds) }),
};
