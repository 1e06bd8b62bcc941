// Typed, promise-based views of ts-proto's grpc-js service definitions: handlers are async functions
// that return a response or throw (DomainError), clients return promises and throw RemoteCallError.
import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { IdempotencyToken } from '../idempotency';
import { Logger } from '../logger';
import { fromServiceError, toServiceError } from './errors';
import { readIdempotency, writeIdempotency } from './idempotency';

export const REQUEST_ID = 'x-request-id';

type Method<Req, Res> = grpc.MethodDefinition<Req, Res>;

export interface CallContext {
  requestId: string;
  log: Logger;
  /** The request's scoped Idempotency-Key and fingerprint, when the client sent a key (POST only). */
  idempotency?: IdempotencyToken;
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
  /** Carried in metadata (grpc/idempotency.ts): the service records it with the change it makes. */
  idempotency?: IdempotencyToken;
}

export interface ServiceBinding {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
  /** Fully-qualified name reported by gRPC health checking. */
  name: string;
}

/** Adapts async handlers to grpc-js; every error leaves through toServiceError. */
export function implement<S extends grpc.ServiceDefinition>(
  name: string,
  definition: S,
  handlers: AsyncHandlers<S>,
  log: Logger,
): ServiceBinding {
  const implementation: grpc.UntypedServiceImplementation = {};
  const contextOf = (call: { metadata: grpc.Metadata }, method: string): CallContext => {
    const requestId = String(call.metadata.get(REQUEST_ID)[0] ?? randomUUID());
    // The child logger is built only when a handler logs: most calls never do.
    let child: Logger | undefined;
    return {
      requestId,
      idempotency: readIdempotency(call.metadata),
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
  for (const method of Object.keys(definition)) {
    const handler = (handlers as Record<string, (req: unknown, ctx: CallContext) => unknown>)[method];
    const { requestStream, responseStream } = definition[method];
    if (requestStream && !responseStream) {
      implementation[method] = (call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const ctx = contextOf(call, method);
        // A client that cancels (or whose connection drops) mid-stream makes the handler's iteration throw.
        call.on('cancelled', () => call.destroy(new Error('the client cancelled the stream')));
        (handler(call, ctx) as Promise<unknown>).then(
          (response) => callback(null, response),
          (err: unknown) => callback(failed(ctx, err), null),
        );
      };
      continue;
    }
    if (responseStream && !requestStream) {
      implementation[method] = (call: grpc.ServerWritableStream<unknown, unknown>) => {
        const ctx = contextOf(call, method);
        (async () => {
          for await (const message of handler(call.request, ctx) as AsyncIterable<unknown>) {
            if (call.cancelled) return;
            if (!call.write(message)) await new Promise((resolve) => call.once('drain', resolve));
          }
          call.end();
        })().catch((err: unknown) => call.emit('error', failed(ctx, err)));
      };
      continue;
    }
    implementation[method] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const ctx = contextOf(call, method);
      (handler(call.request, ctx) as Promise<unknown>).then(
        (response) => callback(null, response),
        (err: unknown) => callback(failed(ctx, err), null),
      );
    };
  }
  return { definition, implementation, name };
}

const channelOptions: grpc.ChannelOptions = {
  'grpc.keepalive_time_ms': 30_000,
  // Channelz (runtime introspection) is unused here and counts every call.
  'grpc.enable_channelz': 0,
  'grpc.max_receive_message_length': 32 * 1024 * 1024,
};

/** A promise-based client for one service at `address` (host:port). */
export function connect<S extends grpc.ServiceDefinition>(definition: S, serviceName: string, address: string): AsyncClient<S> & { close(): void } {
  const Ctor = grpc.makeGenericClientConstructor(definition, serviceName);
  const client = new Ctor(address, grpc.credentials.createInsecure(), channelOptions) as unknown as Record<string, Function> & grpc.Client;
  const typed: Record<string, unknown> = { close: () => client.close() };
  const metadataOf = (call: CallOptions) => {
    const metadata = new grpc.Metadata();
    if (call.requestId) metadata.set(REQUEST_ID, call.requestId);
    writeIdempotency(metadata, call.idempotency);
    return metadata;
  };
  const deadlineOf = (call: CallOptions) => ({ deadline: Date.now() + (call.timeoutMs ?? 10_000) });
  for (const method of Object.keys(definition)) {
    const { requestStream, responseStream } = definition[method];
    if (requestStream && !responseStream) {
      typed[method] = (requests: AsyncIterable<unknown> | Iterable<unknown>, call: CallOptions = {}) =>
        new Promise((resolve, reject) => {
          const stream = client[method].call(client, metadataOf(call), deadlineOf(call), (err: grpc.ServiceError | null, res: unknown) =>
            err ? reject(fromServiceError(err)) : resolve(res),
          ) as grpc.ClientWritableStream<unknown>;
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
          const stream = client[method].call(client, request, metadataOf(call), deadlineOf(call)) as grpc.ClientReadableStream<unknown>;
          try {
            for await (const message of stream) yield message;
          } catch (err) {
            throw (err as grpc.ServiceError).code !== undefined ? fromServiceError(err as grpc.ServiceError) : err;
          } finally {
            stream.cancel();
          }
        },
      });
      continue;
    }
    typed[method] = (request: unknown, call: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        client[method].call(client, request, metadataOf(call), deadlineOf(call), (err: grpc.ServiceError | null, res: unknown) =>
          err ? reject(fromServiceError(err)) : resolve(res),
        );
      });
  }
  return typed as AsyncClient<S> & { close(): void };
}
