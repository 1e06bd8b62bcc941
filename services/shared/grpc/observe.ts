// Metrics and tracing of every RPC, server and client side, hooked into the one `implement()` and the one
// `connect()` (typed.ts): a count and a latency histogram by service, method and status code, and — with
// tracing on — a span per call whose context travels in the call's metadata as W3C `traceparent`.
import * as grpc from '@grpc/grpc-js';
import { counter, histogram, labelSets, PREFIX, secondsSince } from '../observability/metrics';
import { Context, extractFrom, injectInto, markError, SpanKind, startSpan } from '../observability/tracing';

const LABELS = ['grpc_service', 'grpc_method', 'grpc_code'] as const;
const labelsOf = labelSets(LABELS);

const serverSeries = () => ({
  handled: counter(`${PREFIX}grpc_server_handled_total`, 'RPCs completed by this server, by service, method and status code.', LABELS),
  seconds: histogram(`${PREFIX}grpc_server_handling_seconds`, 'Time from receiving an RPC to answering it, by service, method and status code.', LABELS),
});
const clientSeries = () => ({
  handled: counter(`${PREFIX}grpc_client_handled_total`, 'RPCs this process made, by service, method and status code (UNAVAILABLE: the peer was unreachable).', LABELS),
  seconds: histogram(`${PREFIX}grpc_client_handling_seconds`, 'Time from starting an RPC to its answer, by service, method and status code.', LABELS),
});
// Looked up on first use and kept: a registry lookup per call would cost more than the observation.
let serverKept: ReturnType<typeof serverSeries> | undefined;
let clientKept: ReturnType<typeof clientSeries> | undefined;
const server = () => (serverKept ??= serverSeries());
const client = () => (clientKept ??= clientSeries());

const codeName = (code: grpc.status): string => grpc.status[code] ?? String(code);

const metadataGetter = {
  get: (m: grpc.Metadata, key: string) => {
    const [value] = m.get(key);
    return value === undefined ? undefined : String(value);
  },
  keys: (m: grpc.Metadata) => Object.keys(m.getMap()),
};
const metadataSetter = { set: (m: grpc.Metadata, key: string, value: string) => m.set(key, value) };

export interface ObservedCall {
  /** The span's context (tracing on): the handler runs in it, so its own calls and writes join the trace. */
  context?: Context;
  done(code: grpc.status): void;
}

/** Starts observing one incoming RPC of `service`/`method`. */
export function observeServerCall(service: string, method: string, metadata: grpc.Metadata): ObservedCall {
  const m = server();
  const started = process.hrtime.bigint();
  const span = startSpan(`${service}/${method}`, {
    kind: SpanKind.SERVER,
    parent: extractFrom(metadata, metadataGetter),
    attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method },
  });
  return {
    context: span?.context,
    done: (code) => {
      const name = codeName(code);
      const labels = labelsOf(service, method, name);
      m.handled.inc(labels);
      m.seconds.observe(labels, secondsSince(started));
      if (span) {
        span.span.setAttribute('rpc.grpc.status_code', code);
        if (code !== grpc.status.OK) markError(span.span, name);
        span.span.end();
      }
    },
  };
}

/** Starts observing one outgoing RPC; writes the trace context into `metadata`. */
export function observeClientCall(service: string, method: string, metadata: grpc.Metadata): ObservedCall {
  const m = client();
  const started = process.hrtime.bigint();
  const span = startSpan(`${service}/${method}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method },
  });
  if (span) injectInto(metadata, metadataSetter, span.context);
  return {
    context: span?.context,
    done: (code) => {
      const name = codeName(code);
      const labels = labelsOf(service, method, name);
      m.handled.inc(labels);
      m.seconds.observe(labels, secondsSince(started));
      if (span) {
        span.span.setAttribute('rpc.grpc.status_code', code);
        if (code !== grpc.status.OK) markError(span.span, name);
        span.span.end();
      }
    },
  };
}
