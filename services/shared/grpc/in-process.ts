// The embedded mode's in-process transport, as grpc-java's in-process channel or grpc-go's bufconn: the
// gateway's and the services' calls to each other skip HTTP/2 and the socket, and nothing else. The same
// generated clients and service definitions, the same `implement()` handlers and caller checks:
// - every message is encoded and decoded by the definition's protobuf codecs (requestSerialize →
//   requestDeserialize, the same for responses), so a field the proto lacks is dropped as on the wire and a
//   value the codec cannot write fails the call (INTERNAL) as on the wire;
// - metadata is copied to the server (request id, idempotency key, W3C traceparent); the deadline (the call's
//   timeout, never past the caller's own deadline) runs as a timer that fails the call with DEADLINE_EXCEEDED
//   and cancels the server's side; a client that stops reading a stream or whose request source fails
//   cancels it;
// - a handler's error reaches the client as a grpc-js ServiceError does (code, details, trailers with the
//   `invoicing-error-bin` detail), turned into RemoteCallError by the same `fromServiceError`;
// - the caller's identity travels in the address (`in-process:<target>?caller=<identity>`, given to each
//   module by the embedded launcher) and is checked against the binding's callers by the same `authorised()`
//   wrapper as under mTLS: PERMISSION_DENIED for anyone else.
// Contract: test/contract/grpc-transport.contract.ts runs the same cases over this and over grpc-js.
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import { PeerCertificate } from 'node:tls';
import { ConfigError } from '../config';
import { outgoingDeadline } from './deadline';
import { fromServiceError } from './errors';
import { authorised } from './mesh';
import { observeClientCall } from './observe';

// typed.ts's ServiceBinding and CallOptions, as far as this file reads them (typed.ts imports this file).
interface ServiceBinding {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
  name: string;
  callers?: readonly string[];
  admin?: boolean;
}
interface CallOptions {
  timeoutMs?: number;
  deadline?: number;
}

const SCHEME = 'in-process:';
/** Messages a stream buffers before the writer waits (grpc-js's write() returns false likewise). */
const HIGH_WATER = 16;
const DEFAULT_TIMEOUT_MS = 10_000;

/** A call's time budget as grpc-js computes it: its own timeout, never past the caller's deadline (grpc/deadline.ts). */
function timeoutOf(options: CallOptions): number {
  return Math.max(0, outgoingDeadline(options.deadline, options.timeoutMs ?? DEFAULT_TIMEOUT_MS) - Date.now());
}

type Served = { definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation };
/** What each target (a module) serves, by fully-qualified service name. */
const targets = new Map<string, Map<string, Served>>();

/** The address a caller with `identity` uses to reach `target`'s services in this process. */
export function inProcessAddress(target: string, caller: string): string {
  return `${SCHEME}${target}?caller=${encodeURIComponent(caller)}`;
}

export function isInProcessAddress(address: string): boolean {
  return address.startsWith(SCHEME);
}

/**
 * Serves `bindings` (admin bindings excepted: they stay on their socket) to in-process callers of `target`,
 * each behind its caller check. Returns the function that stops serving them.
 */
export function serveInProcess(target: string, bindings: readonly ServiceBinding[]): () => void {
  const served = new Map<string, Served>();
  for (const binding of bindings) {
    if (binding.admin) continue;
    if (!binding.callers?.length) throw new ConfigError(`${binding.name} names no callers: nobody could call it`);
    served.set(binding.name, { definition: binding.definition, implementation: authorised(binding.name, binding.definition, binding.implementation, binding.callers) });
  }
  targets.set(target, served);
  return () => {
    if (targets.get(target) === served) targets.delete(target);
  };
}

type StatusError = grpc.ServiceError;

function statusError(code: grpc.status, details: string, metadata = new grpc.Metadata()): StatusError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

/** What a handler passed to its callback or stream, as the client of a real channel receives it. */
function received(err: Partial<StatusError> | Error): StatusError {
  const e = err as Partial<StatusError>;
  return statusError(e.code ?? grpc.status.UNKNOWN, e.details ?? e.message ?? 'unknown error', e.metadata?.clone() ?? new grpc.Metadata());
}

/** Through the codec and back: what the other side of a wire would see. */
function copy(serialize: grpc.serialize<unknown>, deserialize: grpc.deserialize<unknown>, message: unknown, what: string): unknown {
  try {
    return deserialize(serialize(message));
  } catch (err) {
    throw statusError(grpc.status.INTERNAL, `${what} message serialization failure: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The server side of one call, shaped as grpc-js's ServerUnaryCall / ServerWritableStream / ServerReadableStream. */
class InProcessServerCall extends EventEmitter {
  request: unknown;
  cancelled = false;
  constructor(
    readonly metadata: grpc.Metadata,
    private readonly deadline: number,
    private readonly auth: { sslPeerCertificate: PeerCertificate },
    private readonly path: string,
  ) {
    super();
  }
  getDeadline(): grpc.Deadline {
    return this.deadline;
  }
  getAuthContext() {
    return this.auth;
  }
  getPeer(): string {
    return 'in-process';
  }
  getPath(): string {
    return this.path;
  }
  sendMetadata(): void {}
  /** The client went away (deadline, cancel): as grpc-js, `cancelled` turns true and the event fires once. */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit('cancelled', 'cancelled');
  }
}

/** A server-streaming call: the handler writes, the client iterates. */
class InProcessWritableCall extends InProcessServerCall {
  private queue: unknown[] = [];
  private ended = false;
  private failure: StatusError | undefined;
  private wake: (() => void) | undefined;
  constructor(
    metadata: grpc.Metadata,
    deadline: number,
    auth: { sslPeerCertificate: PeerCertificate },
    path: string,
    private readonly serializeResponse: (message: unknown) => unknown,
  ) {
    super(metadata, deadline, auth, path);
    this.on('error', (err: Partial<StatusError>) => this.fail(received(err)));
    // A writer waiting for 'drain' is released when the client goes away.
    this.on('cancelled', () => this.emit('drain'));
  }
  write(message: unknown): boolean {
    if (this.cancelled || this.ended || this.failure) return false;
    try {
      this.queue.push(this.serializeResponse(message));
    } catch (err) {
      this.fail(err as StatusError);
      return false;
    }
    this.wake?.();
    return this.queue.length < HIGH_WATER;
  }
  end(): void {
    this.ended = true;
    this.wake?.();
  }
  fail(err: StatusError): void {
    if (this.ended || this.failure) return;
    this.failure = err;
    this.wake?.();
  }
  async *messages(): AsyncGenerator<unknown> {
    while (true) {
      if (this.queue.length) {
        const message = this.queue.shift();
        if (this.queue.length === HIGH_WATER - 1) this.emit('drain');
        yield message;
      } else if (this.failure) throw this.failure;
      else if (this.ended) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

/** A client-streaming call: the client pushes, the handler iterates; destroy(err) makes its iteration throw. */
class InProcessReadableCall extends InProcessServerCall implements AsyncIterable<unknown> {
  private queue: unknown[] = [];
  private ended = false;
  private destroyed: Error | undefined;
  private wakeReader: (() => void) | undefined;
  private wakeWriter: (() => void) | undefined;
  push(message: unknown): void {
    this.queue.push(message);
    this.wakeReader?.();
  }
  end(): void {
    this.ended = true;
    this.wakeReader?.();
  }
  destroy(err?: Error): void {
    this.destroyed = err ?? new Error('destroyed');
    this.wakeReader?.();
    this.wakeWriter?.();
  }
  /** Resolves when the handler has read the buffer down (or gave up), so a fast client cannot flood it. */
  async drained(): Promise<void> {
    while (this.queue.length >= HIGH_WATER && !this.destroyed && !this.cancelled) await new Promise<void>((resolve) => (this.wakeWriter = resolve));
  }
  async *[Symbol.asyncIterator](): AsyncGenerator<unknown> {
    while (true) {
      if (this.destroyed) throw this.destroyed;
      if (this.queue.length) {
        yield this.queue.shift();
        this.wakeWriter?.();
      } else if (this.ended) return;
      else await new Promise<void>((resolve) => (this.wakeReader = resolve));
      this.wakeReader = undefined;
    }
  }
}

/**
 * A client whose calls run the handlers of `address`'s target in this process (see the file's comment);
 * `metadataOf` builds a call's metadata exactly as the grpc-js client does.
 */
export function connectInProcess<O extends CallOptions>(
  definition: grpc.ServiceDefinition,
  serviceName: string,
  address: string,
  metadataOf: (call: O) => grpc.Metadata,
): Record<string, unknown> {
  const match = /^in-process:([^?]+)\?caller=(.+)$/.exec(address);
  if (!match) throw new ConfigError(`${address} is not an in-process address (in-process:<target>?caller=<identity>)`);
  const [, target, caller] = match;
  const identity = decodeURIComponent(caller);
  // The caller's identity as the `authorised()` guard reads it from a verified client certificate.
  const auth = { sslPeerCertificate: { subject: { CN: identity }, subjectaltname: `DNS:${identity}` } as unknown as PeerCertificate };
  const handlerOf = (method: string): grpc.UntypedHandleCall | StatusError => {
    const served = targets.get(target);
    // As a channel to an address where nothing listens: UNAVAILABLE; a server without the service: UNIMPLEMENTED.
    if (!served) return statusError(grpc.status.UNAVAILABLE, `no in-process server for ${target}`);
    return served.get(serviceName)?.implementation[method] ?? statusError(grpc.status.UNIMPLEMENTED, `The server does not implement the method ${definition[method].path}`);
  };
  const typed: Record<string, unknown> = { close: () => undefined };

  /** Starts the server side with a deadline; `finish` settles the call once (later outcomes are dropped). */
  const start = <C extends InProcessServerCall>(call: C, timeoutMs: number, onTimeout: (err: StatusError) => void) => {
    const timer = setTimeout(() => {
      onTimeout(statusError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
      call.cancel();
    }, timeoutMs);
    return () => clearTimeout(timer);
  };

  /**
   * The settling of a call that answers once (unary, client-streaming): the first outcome resolves or
   * rejects the caller's promise, stops the deadline timer and is observed; later outcomes are dropped.
   */
  const once = (observed: { done(code: grpc.status): void }, resolve: (res: unknown) => void, reject: (err: unknown) => void) => {
    let settled = false;
    let stopTimer = () => undefined as void;
    const settle = (err: StatusError | null, res?: unknown) => {
      if (settled) return;
      settled = true;
      stopTimer();
      observed.done(err ? err.code : grpc.status.OK);
      if (err) reject(fromServiceError(err));
      else resolve(res);
    };
    /** The caller's own source failed: the caller's promise rejects with that error, observed as CANCELLED. */
    const abandon = (err: unknown) => {
      if (settled) return;
      settled = true;
      stopTimer();
      observed.done(grpc.status.CANCELLED);
      reject(err);
    };
    return { settle, abandon, isSettled: () => settled, timing: (stop: () => void) => void (stopTimer = stop) };
  };

  for (const method of Object.keys(definition)) {
    const { requestStream, responseStream, requestSerialize, requestDeserialize, responseSerialize, responseDeserialize, path } = definition[method];
    const toServer = (message: unknown) => copy(requestSerialize, requestDeserialize, message, 'Request');
    const toClient = (message: unknown) => copy(responseSerialize, responseDeserialize, message, 'Response');
    /** The unary answer a handler gives through its callback, for unary and client-streaming calls. */
    const answer = (settle: (err: StatusError | null, res?: unknown) => void) => (err: Partial<StatusError> | null, response?: unknown) => {
      if (err) return settle(received(err));
      try {
        settle(null, toClient(response));
      } catch (failure) {
        settle(failure as StatusError);
      }
    };

    if (requestStream && !responseStream) {
      typed[method] = (requests: AsyncIterable<unknown> | Iterable<unknown>, options: O = {} as O) => {
        const metadata = metadataOf(options);
        const observed = observeClientCall(serviceName, method, metadata);
        return new Promise((resolve, reject) => {
          const handler = handlerOf(method);
          if (handler instanceof Error) {
            observed.done(handler.code);
            return reject(fromServiceError(handler));
          }
          const timeoutMs = timeoutOf(options);
          const call = new InProcessReadableCall(metadata.clone(), Date.now() + timeoutMs, auth, path);
          const { settle, abandon, isSettled, timing } = once(observed, resolve, reject);
          timing(start(call, timeoutMs, (err) => settle(err)));
          (handler as grpc.handleClientStreamingCall<unknown, unknown>)(call as unknown as grpc.ServerReadableStream<unknown, unknown>, answer(settle));
          (async () => {
            for await (const message of requests) {
              if (isSettled() || call.cancelled) return;
              call.push(toServer(message));
              await call.drained();
            }
            call.end();
          })().catch((err: unknown) => {
            // The source failed (e.g. the HTTP client went away): cancel, so the handler abandons the call.
            call.cancel();
            abandon(err);
          });
        });
      };
      continue;
    }

    if (responseStream && !requestStream) {
      typed[method] = (request: unknown, options: O = {} as O) => ({
        async *[Symbol.asyncIterator]() {
          const metadata = metadataOf(options);
          const observed = observeClientCall(serviceName, method, metadata);
          let code = grpc.status.OK;
          const timeoutMs = timeoutOf(options);
          const call = new InProcessWritableCall(metadata.clone(), Date.now() + timeoutMs, auth, path, toClient);
          const stopTimer = start(call, timeoutMs, (err) => call.fail(err));
          try {
            const handler = handlerOf(method);
            if (handler instanceof Error) throw handler;
            call.request = toServer(request);
            (handler as grpc.handleServerStreamingCall<unknown, unknown>)(call as unknown as grpc.ServerWritableStream<unknown, unknown>);
            yield* call.messages();
          } catch (err) {
            const failure = err as StatusError;
            code = failure.code ?? grpc.status.UNKNOWN;
            throw failure.code !== undefined ? fromServiceError(failure) : err;
          } finally {
            stopTimer();
            observed.done(code);
            // The client stopped reading (or the call ended): the handler stops writing.
            call.cancel();
          }
        },
      });
      continue;
    }

    typed[method] = (request: unknown, options: O = {} as O) => {
      const metadata = metadataOf(options);
      const observed = observeClientCall(serviceName, method, metadata);
      return new Promise((resolve, reject) => {
        const handler = handlerOf(method);
        if (handler instanceof Error) {
          observed.done(handler.code);
          return reject(fromServiceError(handler));
        }
        const timeoutMs = timeoutOf(options);
        const call = new InProcessServerCall(metadata.clone(), Date.now() + timeoutMs, auth, path);
        const { settle, timing } = once(observed, resolve, reject);
        try {
          call.request = toServer(request);
        } catch (err) {
          return settle(err as StatusError);
        }
        timing(start(call, timeoutMs, (err) => settle(err)));
        (handler as grpc.handleUnaryCall<unknown, unknown>)(call as unknown as grpc.ServerUnaryCall<unknown, unknown>, answer(settle));
      });
    };
  }
  return typed;
}
