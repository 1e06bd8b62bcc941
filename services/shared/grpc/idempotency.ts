// The Idempotency-Key of an HTTP request, carried to the services in gRPC metadata so they can record
// it with the change itself (services/shared/idempotency.ts): the edge's own record and the service's
// write commit separately, and only the service's write can make a retry after a crash safe.
import * as grpc from '@grpc/grpc-js';
import { IdempotencyToken, TOKEN_CHARS } from '../idempotency';

/** sha256(credential id ‖ key), base64url: the key as the edge scopes it, never the client's raw key. */
export const IDEMPOTENCY_KEY = 'invoicing-idempotency-key';
/** The edge's request fingerprint (method, path with query, body), base64url. */
export const IDEMPOTENCY_FINGERPRINT = 'invoicing-idempotency-fingerprint';

export function writeIdempotency(metadata: grpc.Metadata, token: IdempotencyToken | undefined): void {
  if (!token) return;
  metadata.set(IDEMPOTENCY_KEY, token.key);
  metadata.set(IDEMPOTENCY_FINGERPRINT, token.fingerprint);
}

/** The call's token, or undefined when it carries none (or a malformed one: then the call is simply not keyed). */
export function readIdempotency(metadata: grpc.Metadata): IdempotencyToken | undefined {
  const [key] = metadata.get(IDEMPOTENCY_KEY);
  if (key === undefined) return undefined;
  const [fingerprint] = metadata.get(IDEMPOTENCY_FINGERPRINT);
  if (typeof key !== 'string' || typeof fingerprint !== 'string' || !TOKEN_CHARS.test(key) || !TOKEN_CHARS.test(fingerprint)) return undefined;
  return { key, fingerprint };
}
