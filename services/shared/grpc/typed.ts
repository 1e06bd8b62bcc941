// Typed, promise-based views of ts-proto's grpc-js service definitions: handlers are async functions
// that return a response or throw (DomainError), clients return promises and throw RemoteCallError.
import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { IdempotencyToken } from '../idempotency';
import { Logger } from '../logger';
import { fromServiceError, toServiceError } from './errors';
import { deadlineExceeded, deadlinePassed } from '../deadline';
import { deadlineOfCall, outgoingDeadline } from './deadline';
import { readIdempotency, writeIdempotency } from './idempotency';
import { connectInProcess, isInProcessAddress } from './in-process';
import { clientChannel, MeshTls, meshTlsFromEnv } from './mesh';
import { observeClientCall, observeServerCall } from './observe';
import { isRetryable, withRetries } from './retry';
import { runIn } from '../observability/tracing';

export const REQUEST_ID = 'x-request-id';

type Method<Req, Res> = grpc.MethodDefinition<Req, Res>;

export interface CallContext {
  requestId: string;
  log: Logger;
  /** The request's scoped Idempotency-Key and fingerprint, when the client sent a key (POST only). */
  idempotency?: IdempotencyToken;
  /** The caller's deadline (ms since the epoch), when it set one: pass it on as CallOptions.deadline (grpc/deadline.ts). */
  deadline?: number;
}

// Unary methods take and return one message. A client-streaming method (`stream` request, e.g. a file
// upload in chunks) takes an async iterable of messages: the handler iterates it (it throws when the
// client cancels or goes away mid-stream). A server-streaming method (a file download) yields its
// messages: the handler is an async generator, the client an async iterable (backpressure both ways).
export type AsyncHandlers<S> = {
  [K in keyof S]: S[K] extends Method<infer Req, infer Res>
    ? S[K] extends { requestStream: true }
      ? (requests: AsyncIterable<Req>, ctx: CallContext) => Promise<Res>
      : S[K] extends { responseStream: true }
        ? (request: Req, ctx: CallContext) => AsyncIterable<Res>
        : (request: Req, ctx: CallContext) => Promise<Res>
    : never;
};

export type AsyncClient<S> = {
  [K in keyof S]: S[K] extends Method<infer Req, infer Res>
    ? S[K] extends { requestStream: true }
      ? (requests: AsyncIterable<Req> | Iterable<Req>, call?: CallOptions) => Promise<Res>
      : S[K] extends { responseStream: true }
        ? (request: Req, call?: CallOptions) => AsyncIterable<Res>
        : (request: Req, call?: CallOptions) => Promise<Res>
    : never;
};

export interface CallOptions {
  requestId?: string;
  /** Milliseconds; default 10 s. */
  timeoutMs?: number;
  /** The caller's own deadline (ms since the epoch, a handler's `ctx.deadline`): this call never outlives it. */
  deadline?: number;
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
  const contextOf = (call: { metadata: grpc.Metadata; getDeadline(): grpc.Deadline }, method: string): CallContext => {
    const requestId = String(call.metadata.get(REQUEST_ID)[0] ?? randomUUID());
    // The child logger is built only when a handler logs: most calls never do.
    let child: Logger | undefined;
    return {
      requestId,
      idempotency: readIdempotency(call.metadata),
      deadline: deadlineOfCall(call),
      get log() {
        child ??= log.child({ request_id: requestId, rpc: method });
        return child;
      },
    };
  };
  const failed = (ctx: CallContext, err: unknown) => {
    const { error, expected } = toServiceError(err);
    if (!expected) ctx.log.error({ err }, 'unexpected error');
    return error as grpc.ServiceError;
  };
  /** Runs one call's work observed (count, latency, span) and inside its trace context. */
  const observedRun = <T>(metadata: grpc.Metadata, method: string, ctx: CallContext, work: () => Promise<T>): Promise<T> => {
    const observed = observeServerCall(name, method, metadata);
    // A call whose caller already gave up (it waited in a queue, a connection or a busy event loop)
    // is answered without running: its answer would reach nobody.
    const run = deadlinePassed(ctx.deadline) ? () => Promise.reject(deadlineExceeded()) : work;
    return runIn(observed.context, run).then(
      (response) => {
        observed.done(grpc.status.OK);
        return response;
      },
      (err: unknown) => {
        const error = failed(ctx, err);
        observed.done(error.code ?? grpc.status.UNKNOWN);
        throw error;
      },
    );
  };
  for (const method of Object.keys(definition)) {
    const handler = (handlers as Record<string, (req: unknown, ctx: CallContext) => unknown>)[method];
    const { requestStream, responseStream } = definition[method];
    if (requestStream && !responseStream) {
      implementation[method] = (call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const ctx = contextOf(call, method);
        // A client that cancels (or whose connection drops) mid-stream makes the handler's iteration throw.
        call.on('cancelled', () => call.destroy(new Error('the client cancelled the stream')));
        observedRun(call.metadata, method, ctx, () => handler(call, ctx) as Promise<unknown>).then(
          (response) => callback(null, response),
          (error: grpc.ServiceError) => callback(error, null),
        );
      };
      continue;
    }
    if (responseStream && !requestStream) {
      implementation[method] = (call: grpc.ServerWritableStream<unknown, unknown>) => {
        const ctx = contextOf(call, method);
        observedRun(call.metadata, method, ctx, async () => {
          for await (const message of handler(call.request, ctx) as AsyncIterable<unknown>) {
            if (call.cancelled) return;
            if (!call.write(message)) await new Promise((resolve) => call.once('drain', resolve));
          }
          call.end();
        }).catch((error: grpc.ServiceError) => call.emit('error', error));
      };
      continue;
    }
    implementation[method] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const ctx = contextOf(call, method);
      observedRun(call.metadata, method, ctx, () => handler(call.request, ctx) as Promise<unknown>).then(
        (response) => callback(null, response),
        (error: grpc.ServiceError) => callback(error, null),
      );
    };
  }
  return { definition, implementation, name };
}

/** A call's metadata: request id and idempotency token (the trace context is added by observeClientCall). */
function metadataOf(call: CallOptions): grpc.Metadata {
  const metadata = new grpc.Metadata();
  if (call.requestId) metadata.set(REQUEST_ID, call.requestId);
  writeIdempotency(metadata, call.idempotency);
  return metadata;
}

/**
 * A promise-based client for one service at `address`: host:port, `unix:/path`, or any grpc-js target
 * (`dns:///host:port`, `ipv4:a:p1,b:p2`) balanced round-robin over its addresses. Under mTLS
 * (GRPC_TLS_DIR) it presents the process's certificate and accepts only the named service's.
 * Reads and keyed calls are retried on a transport failure (grpc/retry.ts). An `in-process:` address (the
 * embedded mode) calls the handlers served in this process instead (grpc/in-process.ts).
 */
export function connect<S extends grpc.ServiceDefinition>(
  definition: S,
  serviceName: string,
  address: string,
  tls: MeshTls | null = meshTlsFromEnv(),
): AsyncClient<S> & { close(): void } {
  if (isInProcessAddress(address)) return connectInProcess(definition, serviceName, address, metadataOf) as AsyncClient<S> & { close(): void };
  const Ctor = grpc.makeGenericClientConstructor(definition, serviceName);
  const channel = clientChannel(tls, serviceName);
  const client = new Ctor(address, channel.credentials, channel.options) as unknown as Record<string, Function> & grpc.Client;
  const typed: Record<string, unknown> = { close: () => client.close() };
  const deadlineOf = (call: CallOptions) => ({ deadline: outgoingDeadline(call.deadline, call.timeoutMs ?? 10_000) });
  for (const method of Object.keys(definition)) {
    const { requestStream, responseStream } = definition[method];
    if (requestStream && !responseStream) {
      // A stream cannot be replayed: client-streaming calls are never retried.
      typed[method] = (requests: AsyncIterable<unknown> | Iterable<unknown>, call: CallOptions = {}) =>
        new Promise((resolve, reject) => {
          const metadata = metadataOf(call);
          const observed = observeClientCall(serviceName, method, metadata);
          const stream = client[method].call(client, metadata, deadlineOf(call), (err: grpc.ServiceError | null, res: unknown) => {
            observed.done(err ? (err.code ?? grpc.status.UNKNOWN) : grpc.status.OK);
            if (err) reject(fromServiceError(err));
            else resolve(res);
          }) as grpc.ClientWritableStream<unknown>;
          (async () => {
            for await (const message of requests) {
              if (!stream.write(message)) await new Promise((drained) => stream.once('drain', drained));
            }
            stream.end();
          })().catch((err: unknown) => {
            // The source failed (e.g. the HTTP client went away): cancel, so the server abandons the call.
            stream.cancel();
            reject(err);
          });
        });
      continue;
    }
    if (responseStream && !requestStream) {
      typed[method] = (request: unknown, call: CallOptions = {}) => ({
        async *[Symbol.asyncIterator]() {
          const metadata = metadataOf(call);
          const observed = observeClientCall(serviceName, method, metadata);
          const stream = client[method].call(client, request, metadata, deadlineOf(call)) as grpc.ClientReadableStream<unknown>;
          let code = grpc.status.OK;
          try {
            for await (const message of stream) yield message;
          } catch (err) {
            code = (err as grpc.ServiceError).code ?? grpc.status.UNKNOWN;
            throw (err as grpc.ServiceError).code !== undefined ? fromServiceError(err as grpc.ServiceError) : err;
          } finally {
            observed.done(code);
            stream.cancel();
          }
        },
      });
      continue;
    }
    typed[method] = (request: unknown, call: CallOptions = {}) => {
      const metadata = metadataOf(call);
      // One observation per logical call: its retries are one span and one count.
      const observed = observeClientCall(serviceName, method, metadata);
      const { deadline } = deadlineOf(call);
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
