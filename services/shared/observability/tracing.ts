// OpenTelemetry tracing, off by default: the SDK starts only when OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER is set (OTEL_TRACES_EXPORTER=none keeps it
// off). Spans leave over OTLP/HTTP (JSON), configured by the standard OTEL_* variables (endpoint, headers,
// OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_BSP_*). Context travels as W3C `traceparent`: HTTP headers
// in, gRPC metadata between services, message headers on the bus (Kafka record headers, the in-process
// bus's messages) and, between a write and its event's publication, the outbox entry itself.
// While off, every helper here is a no-op that costs a flag check: no SDK module is even loaded.
import { Context, context, propagation, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, TextMapGetter, TextMapSetter, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { Logger } from '../logger';
import { traceOutboxWith } from '../outbox/entries';

export { SpanKind };
export type { Context, Span };

let enabled = false;
let shutdownProvider: (() => Promise<void>) | undefined;

export const tracingEnabled = (): boolean => enabled;

/** Whether the environment asks for tracing (see the header comment). */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter === 'none') return false;
  return !!(exporter || env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts the SDK for this process when the environment asks for it (or `exporter` is given: tests).
 * Idempotent: the embedded process starts it once for every service it runs.
 */
export async function startTracing(
  serviceName: string,
  log: Logger,
  options: { env?: NodeJS.ProcessEnv; exporter?: SpanExporter } = {},
): Promise<{ shutdown(): Promise<void> }> {
  const env = options.env ?? process.env;
  const shutdown = { shutdown: () => stopTracing() };
  if (enabled || (!options.exporter && !tracingRequested(env))) return shutdown;
  const [{ BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, ConsoleSpanExporter }, { resourceFromAttributes }, { W3CTraceContextPropagator }, { AsyncLocalStorageContextManager }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/core'),
      import('@opentelemetry/context-async-hooks'),
    ]);
  const kind = env.OTEL_TRACES_EXPORTER?.trim() || 'otlp';
  let processor;
  if (options.exporter) processor = new SimpleSpanProcessor(options.exporter);
  else if (kind === 'console') processor = new SimpleSpanProcessor(new ConsoleSpanExporter());
  else if (kind === 'otlp') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    processor = new BatchSpanProcessor(new OTLPTraceExporter());
  } else {
    log.error({ exporter: kind }, 'OTEL_TRACES_EXPORTER must be otlp, console or none; tracing stays off');
    return shutdown;
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || `invoicing-${serviceName}` }),
    spanProcessors: [processor],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  // An event written by a traced request carries the request's context to its publication.
  traceOutboxWith(currentTraceparent);
  enabled = true;
  shutdownProvider = () => provider.shutdown();
  log.info({ exporter: options.exporter ? 'custom' : kind }, 'tracing on');
  return shutdown;
}

/** Flushes and stops the SDK (spans still buffered are exported). */
export async function stopTracing(): Promise<void> {
  const stop = shutdownProvider;
  shutdownProvider = undefined;
  if (!stop) return;
  enabled = false;
  traceOutboxWith(undefined);
  await stop().catch(() => undefined);
  trace.disable();
  propagation.disable();
  context.disable();
}

const tracer = () => trace.getTracer('invoicing');

/** Headers as a plain object (HTTP request headers, bus message headers). */
export type Carrier = Record<string, string | string[] | undefined>;

/** Writes the context (default: the active one) into `carrier` as `traceparent`/`tracestate`. */
export function injectInto<C>(carrier: C, setter?: TextMapSetter<C>, ctx: Context = context.active()): void {
  if (enabled) propagation.inject(ctx, carrier, setter);
}

/** The context `carrier` names, or the root context when it names none (or tracing is off). */
export function extractFrom<C>(carrier: C, getter?: TextMapGetter<C>): Context {
  return enabled ? propagation.extract(ROOT_CONTEXT, carrier, getter) : ROOT_CONTEXT;
}

/** The active span's W3C traceparent, if a span is active. */
export function currentTraceparent(): string | undefined {
  if (!enabled || !trace.getSpan(context.active())) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The active span's trace id (for log lines), if any. */
export function currentTraceId(): string | undefined {
  if (!enabled) return undefined;
  return trace.getSpan(context.active())?.spanContext().traceId;
}

export interface SpanOptions {
  kind: SpanKind;
  /** Parent context; default the active one. */
  parent?: Context;
  attributes?: Record<string, string | number | boolean>;
}

/**
 * Runs `work` inside a new span (and its context, so calls it makes are children), ending the span when
 * the work settles; a thrown error marks the span as failed. With tracing off, runs `work` alone.
 */
export function inSpan<T>(name: string, options: SpanOptions, work: (span?: Span) => Promise<T>): Promise<T> {
  if (!enabled) return work();
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
  return context.with(trace.setSpan(parent, span), () =>
    work(span).then(
      (value) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        span.end();
        throw err;
      },
    ),
  );
}

/** Starts a span whose end the caller controls (an HTTP exchange ends at the response's `finish`). */
export function startSpan(name: string, options: SpanOptions): { span: Span; context: Context } | undefined {
  if (!enabled) return undefined;
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs `fn` with `ctx` active (no-op wrapper while tracing is off). */
export function runIn<T>(ctx: Context | undefined, fn: () => T): T {
  return enabled && ctx ? context.with(ctx, fn) : fn();
}

export function markError(span: Span | undefined, message: string): void {
  span?.setStatus({ code: SpanStatusCode.ERROR, message });
}
