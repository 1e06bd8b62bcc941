// Observability plumbing (docs/observability.md): the /metrics listener and its switch, route templates as
// labels, the work-queue metrics others call (the expenses OCR queue), kafkajs logging through the shared
// logger, tracing off by default and, when on, W3C context through gRPC metadata and bus headers.
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { logLevel } from 'kafkajs';
import net from 'node:net';
import pino from 'pino';
import { Writable } from 'node:stream';
import { GetUserRequest, GetUserResponse, IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { kafkaLevelOf, kafkaLogCreator } from '../../services/shared/bus/kafka-log';
import { MemoryEventBus } from '../../services/shared/bus/memory';
import { observeBus } from '../../services/shared/bus/observed';
import { BusMessage } from '../../services/shared/bus/port';
import { RunningServer, startGrpcServer } from '../../services/shared/grpc/server';
import { AsyncHandlers, connect, implement } from '../../services/shared/grpc/typed';
import { createLogger, Logger } from '../../services/shared/logger';
import { labelSets, registry } from '../../services/shared/observability/metrics';
import { startMetricsServer } from '../../services/shared/observability/metrics-server';
import { currentTraceparent, inSpan, SpanKind, startTracing, stopTracing, tracingEnabled, tracingRequested } from '../../services/shared/observability/tracing';
import { workQueueMetrics } from '../../services/shared/observability/work-queue';
import { RouteTemplates } from '../../gateway/http/observe';

/** A logger whose JSON lines land in `lines`. */
function capturingLogger(level = 'debug'): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: pino({ level }, sink), lines };
}

const busyPort = (): Promise<net.Server & { port: number }> =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => resolve(Object.assign(server, { port: (server.address() as net.AddressInfo).port })));
  });

describe('the /metrics listener (METRICS_PORT, METRICS_HOST)', () => {
  it('serves the registry as Prometheus text at /metrics on loopback, with process metrics; 404 elsewhere', async () => {
    const free = await busyPort();
    free.close();
    const server = await startMetricsServer(createLogger('test'), { METRICS_PORT: String(free.port) });
    try {
      expect(server.port).toBe(free.port);
      const res = await fetch(`http://127.0.0.1:${free.port}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(await res.text()).toContain('invoicing_process_cpu_user_seconds_total');
      expect((await fetch(`http://127.0.0.1:${free.port}/`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('METRICS_PORT=0 turns it off', async () => {
    const server = await startMetricsServer(createLogger('test'), { METRICS_PORT: '0' });
    expect(server.port).toBeUndefined();
  });

  it('a port already taken is logged at error and the process goes on without /metrics', async () => {
    const taken = await busyPort();
    const { log, lines } = capturingLogger();
    try {
      const server = await startMetricsServer(log, { METRICS_PORT: String(taken.port) });
      expect(server.port).toBeUndefined();
      expect(lines).toContainEqual(expect.objectContaining({ level: 50, port: taken.port, msg: expect.stringContaining('metrics endpoint could not be bound') }));
    } finally {
      taken.close();
    }
  });
});

describe('HTTP route labels', () => {
  const templates = new RouteTemplates([
    { method: 'get', template: '/api/v1/accounts/:account_id/invoices/:id' },
    { method: 'post', template: '/api/v1/accounts/:account_id/invoices/:id/issue' },
    { method: 'get', template: '/blobs/*key' },
  ]);

  it('name a request by its template, never its ids', () => {
    expect(templates.match('GET', '/api/v1/accounts/12/invoices/345')).toBe('/api/v1/accounts/:account_id/invoices/:id');
    expect(templates.match('HEAD', '/api/v1/accounts/12/invoices/345/')).toBe('/api/v1/accounts/:account_id/invoices/:id');
    expect(templates.match('POST', '/API/V1/accounts/12/invoices/345/issue')).toBe('/api/v1/accounts/:account_id/invoices/:id/issue');
    expect(templates.match('GET', '/blobs/logos/1/a.png')).toBe('/blobs/*key');
  });

  it('an unknown path or method matches nothing (the label is then "unmatched")', () => {
    expect(templates.match('DELETE', '/api/v1/accounts/12/invoices/345/issue')).toBeUndefined();
    expect(templates.match('GET', '/api/v1/accounts/12/invoices/345/other')).toBeUndefined();
  });
});

describe('label sets kept for hot paths (labelSets)', () => {
  it('the same values give the very same object; other values another; names in order', () => {
    const labelsOf = labelSets(['method', 'route', 'status'] as const);
    const first = labelsOf('GET', '/api/v1/x/:id', '304');
    expect(first).toEqual({ method: 'GET', route: '/api/v1/x/:id', status: '304' });
    expect(labelsOf('GET', '/api/v1/x/:id', '304')).toBe(first);
    expect(labelsOf('GET', '/api/v1/x/:id', '200')).toEqual({ method: 'GET', route: '/api/v1/x/:id', status: '200' });
    // Values are joined without ambiguity: ("a", "b c") is not ("a b", "c").
    expect(labelsOf('a', 'b c', 'd')).not.toBe(labelsOf('a b', 'c', 'd'));
  });
});

describe('work-queue metrics (workQueueMetrics: the OCR queue of expenses, the renderer pool)', () => {
  it('exposes waiting, running (sampled at scrape time or set) and job durations by outcome', async () => {
    let depth = { waiting: 3, running: 1 };
    workQueueMetrics('test_sampled', () => depth);
    const set = workQueueMetrics('test_set');
    set.setWaiting(7);
    const done = set.startJob();
    done('completed');
    let text = await registry.metrics();
    expect(text).toContain('invoicing_work_queue_waiting{queue="test_sampled"} 3');
    expect(text).toContain('invoicing_work_queue_running{queue="test_sampled"} 1');
    expect(text).toContain('invoicing_work_queue_waiting{queue="test_set"} 7');
    expect(text).toContain('invoicing_work_queue_job_duration_seconds_count{queue="test_set",outcome="completed"} 1');
    depth = { waiting: 0, running: 2 };
    text = await registry.metrics();
    expect(text).toContain('invoicing_work_queue_waiting{queue="test_sampled"} 0');
    expect(text).toContain('invoicing_work_queue_running{queue="test_sampled"} 2');
  });
});

describe('kafkajs logs through the shared logger', () => {
  it("maps kafkajs levels to pino's and keeps the entry's fields", () => {
    const { log, lines } = capturingLogger('info');
    const write = kafkaLogCreator(log)();
    write({ namespace: 'Consumer', level: logLevel.ERROR, label: 'ERROR', log: { timestamp: 'x', message: 'Crash: broker gone', groupId: 'g1', retryCount: 3 } });
    write({ namespace: 'Producer', level: logLevel.WARN, label: 'WARN', log: { timestamp: 'x', message: 'slow' } });
    write({ namespace: 'Consumer', level: logLevel.DEBUG, label: 'DEBUG', log: { timestamp: 'x', message: 'chatter' } });
    expect(lines).toEqual([
      expect.objectContaining({ level: 50, component: 'kafka', kafka_namespace: 'Consumer', groupId: 'g1', retryCount: 3, msg: 'Crash: broker gone' }),
      expect.objectContaining({ level: 40, kafka_namespace: 'Producer', msg: 'slow' }),
    ]);
  });

  it('asks kafkajs for no more than the logger prints', () => {
    expect(kafkaLevelOf(pino({ level: 'warn' }))).toBe(logLevel.WARN);
    expect(kafkaLevelOf(pino({ level: 'debug' }))).toBe(logLevel.DEBUG);
    expect(kafkaLevelOf(pino({ level: 'silent' }))).toBe(logLevel.NOTHING);
  });
});

describe('tracing', () => {
  it('is off unless an OTLP endpoint or OTEL_TRACES_EXPORTER is set (and none keeps it off)', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
  });

  it('while off, nothing is added to bus messages', async () => {
    await startTracing('test', createLogger('test'), { env: {} });
    expect(tracingEnabled()).toBe(false);
    const bus = observeBus(new MemoryEventBus());
    const got: BusMessage[] = [];
    await bus.subscribe('t.off', { group: 'g', fromBeginning: true }, async (m) => {
      got.push(m);
    });
    await bus.publish('t.off', [{ key: '1', value: new Uint8Array([1]) }]);
    await waitFor(() => got.length === 1);
    expect(got[0].headers).toBeUndefined();
  });

  describe('when on', () => {
    const exporter = new InMemorySpanExporter();
    let server: RunningServer;
    let seenTraceparent: string | undefined;

    beforeAll(async () => {
      await startTracing('test', createLogger('test'), { exporter });
      const getUser = async (req: GetUserRequest): Promise<GetUserResponse> => {
        seenTraceparent = currentTraceparent();
        return { user: { id: req.user_id, email: 'x@example.com', name: '', created_at: '', updated_at: '' } };
      };
      const handlers = { getUser } as unknown as AsyncHandlers<typeof IdentityServiceService>;
      const log = createLogger('test');
      server = await startGrpcServer({ bindings: [implement('invoicing.identity.v1.IdentityService', IdentityServiceService, handlers, log)], log });
    });
    afterAll(async () => {
      await server?.shutdown();
      await stopTracing();
    });

    it('a gRPC call carries the caller\'s context in its metadata: the server span is the client span\'s child', async () => {
      const client = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', server.address);
      const traceId = await inSpan('caller', { kind: SpanKind.INTERNAL }, async (span) => {
        await client.getUser({ user_id: 1 });
        return span!.spanContext().traceId;
      });
      client.close();
      const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      const clientSpan = spans.find((s) => s.kind === SpanKind.CLIENT)!;
      const serverSpan = spans.find((s) => s.kind === SpanKind.SERVER)!;
      expect(clientSpan.name).toBe('invoicing.identity.v1.IdentityService/getUser');
      expect(serverSpan.parentSpanContext?.spanId).toBe(clientSpan.spanContext().spanId);
      expect(seenTraceparent).toContain(traceId);
    });

    it("a bus message carries the publisher's context in its headers: the consumer span is the producer span's child", async () => {
      const bus = observeBus(new MemoryEventBus());
      const got: BusMessage[] = [];
      await bus.subscribe('t.on', { group: 'g', fromBeginning: true }, async (m) => {
        got.push(m);
      });
      const traceId = await inSpan('writer', { kind: SpanKind.INTERNAL }, async (span) => {
        await bus.publish('t.on', [{ key: '1', value: new Uint8Array([1]) }]);
        return span!.spanContext().traceId;
      });
      await waitFor(() => got.length === 1);
      expect(got[0].headers?.traceparent).toContain(traceId);
      await waitFor(() => exporter.getFinishedSpans().some((s) => s.kind === SpanKind.CONSUMER && s.spanContext().traceId === traceId));
      const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      const producer = spans.find((s) => s.kind === SpanKind.PRODUCER)!;
      const consumer = spans.find((s) => s.kind === SpanKind.CONSUMER)!;
      expect(producer.name).toBe('publish t.on');
      expect(consumer.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
    });
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
