// Typed, promise-based views of ts-proto's grpc-js service definitions: handlers are async functions
// that return a response or throw (DomainError), clients return promises and throw RemoteCallError.
import * as grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import { IdempotencyToken } from '../idempotency';
import { Logger } from '../logger';
import { fromServiceError, toServiceError } from './errors';
import { readIdempotency, writeIdempotency } from './idempotency';
import { observeClientCall, observeServerCall } from './observe';
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
  for (const method of Object.keys(definition)) {
    typed[method] = (request: unknown, call: CallOptions = {}) =>
      new Promise((resolve, reject) => {
        const metadata = new grpc.Metadata();
        if (call.requestId) metadata.set(REQUEST_ID, call.requestId);
        writeIdempotency(metadata, call.idempotency);
        const observed = observeClientCall(serviceName, method, metadata);
        const deadline = Date.now() + (call.timeoutMs ?? 10_000);
        client[method].call(client, request, metadata, { deadline }, (err: grpc.ServiceError | null, res: unknown) => {
          observed.done(err ? err.code : grpc.status.OK);
          if (err) reject(fromServiceError(err));
          else resolve(res);
        });
      });
  }
  return typed as AsyncClient<S> & { close(): void };
}
