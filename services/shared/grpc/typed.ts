// Typed, promise-based views of ts-proto's grpc-js service definitions: handlers are async functions
// that return a response or throw (DomainError), clients return promises and throw RemoteCallError.
import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { IdempotencyToken } from '../idempotency';
import { Logger } from '../logger';
import { fromServiceError, toServiceError } from './errors';
import { readIdempotency, writeIdempotency } from './idempotency';
import { clientChannel, MeshTls, meshTlsFromEnv } from './mesh';
import { observeClientCall, observeServerCall } from './observe';
import { isRetryable, withRetries } from './retry';
import { runIn } from '../observability/tracing';

export const REQUEST_ID = 'x-request-id';

type Unary<Req, Res> = grpc.MethodDefinition<Req, Res>;

export interface CallContext {
  requestId: string;
  log: Logger;
  /** The request's scoped Idempotency-Key and fingerprint, when the client sent a key (POST only). */
  idempotency?: IdempotencyToken;
}

export type AsyncHandlers<S> = {
  [K in keyof S]: S[K] extends Unary<infer Req, infer Res> ? (request: Req, ctx: CallContext) => Promise<Res> : never;
};

export type AsyncClient<S> = {
  [K in keyof S]: S[K] extends Unary<infer Req, infer Res> ? (request: Req, call?: CallOptions) => Promise<Res> : never;
};

export interface CallOptions {
  requestId?: string;
  /** Milliseconds; default 10 s. */
  timeoutMs?: number;
  /** Carried in metadata (grpc/idempotency.ts): the service records it with the change it makes. */
  idempotency?: IdempotencyToken;
}

export interface ServiceBinding {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
  /** Fully-qualified name reported by gRPC health checking. */
  name: string;
  /** Certificate identities allowed to call it under mTLS (services/shared/grpc/mesh.ts); none: nobody. */
  callers?: readonly string[];
  /** Served only on the admin port (ADMIN_GRPC_PORT), never on the service port. */
  admin?: boolean;
}

/** A binding restricted to `callers`; `admin` moves it to the admin port. */
export function restrict(binding: ServiceBinding, access: { callers: readonly string[]; admin?: boolean }): ServiceBinding {
  return { ...binding, ...access };
}

/** Adapts async handlers to grpc-js; every error leaves through toServiceError. */
export function implement<S extends grpc.ServiceDefinition>(
  name: string,
  definition: S,
  handlers: AsyncHandlers<S>,
  log: Logger,
): ServiceBinding {
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of Object.keys(definition)) {
    const handler = (handlers as Record<string, (req: unknown, ctx: CallContext) => Promise<unknown>>)[method];
    implementation[method] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const requestId = String(call.metadata.get(REQUEST_ID)[0] ?? randomUUID());
      // The child logger is built only when a handler logs: most calls never do.
      let child: Logger | undefined;
      const ctx: CallContext = {
        requestId,
        idempotency: readIdempotency(call.metadata),
        get log() {
          child ??= log.child({ request_id: requestId, rpc: method });
          return child;
        },
      };
      const observed = observeServerCall(name, method, call.metadata);
      runIn(observed.context, () => handler(call.request, ctx)).then(
        (response) => {
          observed.done(grpc.status.OK);
          callback(null, response);
        },
        (err: unknown) => {
          const { error, expected } = toServiceError(err);
          if (!expected) ctx.log.error({ err }, 'unexpected error');
          observed.done(error.code ?? grpc.status.UNKNOWN);
          callback(error as grpc.ServiceError, null);
        },
      );
    };
  }
  return { definition, implementation, name };
}

/**
 * A promise-based client for one service at `address`: host:port, or any grpc-js target
 * (`dns:///host:port`, `ipv4:a:p1,b:p2`) balanced round-robin over its addresses. Under mTLS
 * (GRPC_TLS_DIR) it presents the process's certificate and accepts only the named service's.
 * Reads and keyed calls are retried on a transport failure (grpc/retry.ts).
 */
export function connect<S extends grpc.ServiceDefinition>(
  definition: S,
  serviceName: string,
  address: string,
  tls: MeshTls | null = meshTlsFromEnv(),
): AsyncClient<S> & { close(): void } {
  const Ctor = grpc.makeGenericClientConstructor(definition, serviceName);
  const channel = clientChannel(tls, serviceName);
  const client = new Ctor(address, channel.credentials, channel.options) as unknown as Record<string, Function> & grpc.Client;
  const typed: Record<string, unknown> = { close: () => client.close() };
  for (const method of Object.keys(definition)) {
    typed[method] = (request: unknown, call: CallOptions = {}) => {
      const metadata = new grpc.Metadata();
      if (call.requestId) metadata.set(REQUEST_ID, call.requestId);
      writeIdempotency(metadata, call.idempotency);
      // One observation per logical call: its retries are one span and one count.
      const observed = observeClientCall(serviceName, method, metadata);
      const deadline = Date.now() + (call.timeoutMs ?? 10_000);
      const attempt = () =>
        new Promise((resolve, reject) => {
          client[method].call(client, request, metadata, { deadline }, (err: grpc.ServiceError | null, res: unknown) => (err ? reject(err) : resolve(res)));
        });
      return withRetries(isRetryable(method, call.idempotency !== undefined), deadline, attempt).then(
        (res) => {
          observed.done(grpc.status.OK);
          return res;
        },
        (err: grpc.ServiceError) => {
          observed.done(err.code ?? grpc.status.UNKNOWN);
          throw fromServiceError(err);
        },
      );
    };
  }
  return typed as AsyncClient<S> & { close(): void };
}
