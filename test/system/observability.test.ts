// Observability (issue 11, docs/observability.md), in both run modes: every process serves Prometheus
// text at /metrics with the named series after traffic, labelled by route template (never ids); one
// request's spans in the gateway, the documents service and the bus consumer share a trace id (W3C
// traceparent through HTTP, gRPC metadata, the outbox and the bus); one access-log line per request that
// names the credential by id and never carries a token or a password.
import { randomBytes, randomUUID } from 'node:crypto';
import { eventually } from '../support/api';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { CollectedSpan, OtlpStub, startOtlpStub } from '../support/otlp-stub';
import { Mode, startSystem, System } from '../support/system';

const ISSUE_ROUTE = '/api/v1/accounts/:account_id/invoices/:id/issue';
const INVOICE_ROUTE = '/api/v1/accounts/:account_id/invoices/:id';
const PDF_ROUTE = '/api/v1/accounts/:account_id/invoices/:id/pdf';
const SPAN_KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 };

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
}

/** The value of the series `name{labels…}` (labels in any order), or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const row of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(row);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return undefined;
}

/** Every label value of the series whose name starts with `prefix`. */
function labelValues(text: string, prefix: string, label: string): string[] {
  return text
    .split('\n')
    .filter((row) => row.startsWith(prefix))
    .flatMap((row) => [...row.matchAll(new RegExp(`${label}="([^"]*)"`, 'g'))].map((m) => m[1]));
}

describe.each<Mode>(['embedded', 'distributed'])('observability (%s mode)', (mode) => {
  let system: System;
  let otlp: OtlpStub;
  let ws: DocsWorkspace;
  const gatewayMetrics = () => system.metricsUrls[mode === 'embedded' ? 'embedded' : 'gateway 0'];
  const serviceMetrics = (name: string) => system.metricsUrls[mode === 'embedded' ? 'embedded' : name];

  beforeAll(async () => {
    otlp = await startOtlpStub();
    system = await startSystem({
      mode,
      metrics: true,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100', LOG_LEVEL: 'info', OUTBOX_INTERVAL_MS: '200' },
    });
    ws = await docsWorkspace(system);
  }, 240_000); // five processes and a workspace on a shared 2-core machine
  afterAll(async () => {
    await system?.stop();
    await otlp?.close();
  });

  /** The access log line of one request, once the process has printed it. */
  const accessLine = (requestId: string | null) =>
    eventually(async () => {
      const found = system
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .find((entry) => entry.msg === 'request' && entry.request_id === requestId);
      expect(found).toBeDefined();
      return found;
    });

  const createInvoice = async (headers: Record<string, string> = {}, body: object = {}) =>
    ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()], ...body }, { headers });

  describe('/metrics', () => {
    it('the gateway counts and times HTTP requests by route template, method and status — no ids in labels', async () => {
      const created = await createInvoice();
      expect(created.status).toBe(201);
      expect((await ws.api.get(`${ws.base}/invoices/${created.body.id}`)).status).toBe(200);
      expect((await ws.api.get(`${ws.base}/invoices/999999`)).status).toBe(404);
      const text = await scrape(gatewayMetrics());
      expect(sample(text, 'invoicing_http_requests_total', { method: 'GET', route: INVOICE_ROUTE, status: '200' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'invoicing_http_requests_total', { method: 'GET', route: INVOICE_ROUTE, status: '404' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'invoicing_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/accounts/:account_id/invoices', status: '201' })).toBeGreaterThanOrEqual(1);
      const routes = labelValues(text, 'invoicing_http_', 'route');
      expect(routes.length).toBeGreaterThan(0);
      for (const route of routes) expect(route).not.toMatch(/\/\d+(\/|$)/);
      expect(routes).not.toContain(`${ws.base}/invoices/${created.body.id}`);
      // Process metrics of the runtime, with the system's prefix.
      expect(sample(text, 'invoicing_process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect(text).toContain('invoicing_nodejs_eventloop_lag_seconds');
    });

    it('gRPC calls are counted and timed on both sides by service, method and status code', async () => {
      expect((await ws.api.get(`${ws.base}/invoices/999998`)).status).toBe(404);
      const gateway = await scrape(gatewayMetrics());
      const documents = await scrape(serviceMetrics('documents'));
      const service = 'invoicing.documents.v1.DocumentsService';
      for (const [text, side] of [[gateway, 'client'], [documents, 'server']] as const) {
        expect(sample(text, `invoicing_grpc_${side}_handled_total`, { grpc_service: service, grpc_code: 'OK' })).toBeGreaterThanOrEqual(1);
        expect(sample(text, `invoicing_grpc_${side}_handled_total`, { grpc_service: service, grpc_code: 'NOT_FOUND' })).toBeGreaterThanOrEqual(1);
        expect(sample(text, `invoicing_grpc_${side}_handling_seconds_count`, { grpc_service: service, grpc_code: 'OK' })).toBeGreaterThanOrEqual(1);
      }
      // Documents calls contacts (a purchaser's data): a client in a service process too.
      expect(sample(documents, 'invoicing_grpc_client_handled_total', { grpc_service: 'invoicing.contacts.v1.ContactsService', grpc_code: 'OK' })).toBeGreaterThanOrEqual(1);
    });

    it('idempotency outcomes and rate-limit decisions are counted at the edge', async () => {
      const key = randomUUID();
      expect((await createInvoice({ 'Idempotency-Key': key })).status).toBe(201);
      const replay = await createInvoice({ 'Idempotency-Key': key });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect((await createInvoice({ 'Idempotency-Key': key }, { line_items: [line('200')] })).status).toBe(409);
      const text = await scrape(gatewayMetrics());
      for (const outcome of ['created', 'replayed', 'mismatch']) {
        expect(sample(text, 'invoicing_idempotency_requests_total', { outcome })).toBeGreaterThanOrEqual(1);
      }
      expect(sample(text, 'invoicing_rate_limit_decisions_total', { bucket: 'api', outcome: 'allowed' })).toBeGreaterThanOrEqual(3);
    });

    it('the outbox relay reports depth and publications; the bus consumer its lag; the renderer its pool', async () => {
      const created = await createInvoice();
      expect((await ws.api.post(`${ws.base}/invoices/${created.body.id}/issue`)).status).toBe(200);
      await eventually(async () => {
        const documents = await scrape(serviceMetrics('documents'));
        expect(sample(documents, 'invoicing_outbox_published_total', { source: 'documents' })).toBeGreaterThanOrEqual(1);
        expect(sample(documents, 'invoicing_outbox_pending_records', { source: 'documents' })).toBe(0);
        expect(sample(documents, 'invoicing_bus_published_messages_total', { topic: 'invoicing.documents.v1', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
        const rendering = await scrape(serviceMetrics('rendering'));
        expect(sample(rendering, 'invoicing_bus_consumed_messages_total', { topic: 'invoicing.documents.v1', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
        expect(sample(rendering, 'invoicing_bus_consumer_lag_seconds', { topic: 'invoicing.documents.v1' })).toBeGreaterThanOrEqual(0);
        expect(sample(rendering, 'invoicing_work_queue_waiting', { queue: 'pdf_render' })).toBe(0);
        expect(sample(rendering, 'invoicing_work_queue_running', { queue: 'pdf_render' })).toBeGreaterThanOrEqual(0);
      }, 30_000);
    });

    it('answers 404 off /metrics and never serves the API on the metrics port', async () => {
      const res = await fetch(gatewayMetrics().replace('/metrics', '/api/v1/user/accounts'));
      expect(res.status).toBe(404);
    });
  });

  describe('tracing', () => {
    it("one request's spans in the gateway, the documents service and the bus consumer share its trace id", async () => {
      const created = await createInvoice();
      const traceId = randomBytes(16).toString('hex');
      const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
      const issued = await ws.api.post(`${ws.base}/invoices/${created.body.id}/issue`, undefined, { headers: { traceparent } });
      expect(issued.status).toBe(200);
      const spans = await eventually(async () => {
        const ofTrace = otlp.spans.filter((s) => s.traceId === traceId);
        const find = (kind: number, test: (s: CollectedSpan) => boolean) => ofTrace.find((s) => s.kind === kind && test(s));
        const http = find(SPAN_KIND.SERVER, (s) => s.attributes['http.route'] === ISSUE_ROUTE);
        const rpcClients = ofTrace.filter((s) => s.kind === SPAN_KIND.CLIENT && s.name.startsWith('invoicing.documents.v1.DocumentsService/'));
        // The documents call that wrote the event (the request may make other documents calls too).
        const publish = find(SPAN_KIND.PRODUCER, (s) => s.name === 'publish invoicing.documents.v1');
        const rpcServer = find(SPAN_KIND.SERVER, (s) => s.spanId === publish?.parentSpanId && s.name.startsWith('invoicing.documents.v1.DocumentsService/'));
        const rpcClient = rpcClients.find((s) => s.spanId === rpcServer?.parentSpanId);
        const consume = find(SPAN_KIND.CONSUMER, (s) => s.name === 'consume invoicing.documents.v1' && s.parentSpanId === publish?.spanId);
        expect({ http: !!http, rpcClient: !!rpcClient, rpcServer: !!rpcServer, publish: !!publish, consume: !!consume }).toEqual({
          http: true,
          rpcClient: true,
          rpcServer: true,
          publish: true,
          consume: true,
        });
        return { http: http!, rpcClient: rpcClient!, rpcServer: rpcServer!, publish: publish!, consume: consume! };
      }, 30_000);
      // A chain, not just a shared id: the consumer's span is the child of the publication, which is the
      // child of the documents call that wrote the event, the child of the gateway's call, made under the
      // HTTP request's span, the child of the caller's traceparent.
      expect(spans.rpcClient.parentSpanId).toBe(spans.http.spanId);
      expect(spans.http.parentSpanId).toBe(traceparent.split('-')[2]);
      if (mode === 'distributed') {
        expect(spans.http.service).toBe('invoicing-gateway');
        expect(spans.rpcServer.service).toBe('invoicing-documents');
        expect(spans.consume.service).toBe('invoicing-rendering');
      }
    });
  });

  describe('PDF revalidation (the gateway\'s lean lane)', () => {
    it('is counted, timed, logged and traced like any request: route template, status 304, the pdf budget, the rendering call', async () => {
      const created = await createInvoice();
      expect((await ws.api.post(`${ws.base}/invoices/${created.body.id}/issue`)).status).toBe(200);
      const first = await ws.api.get(`${ws.base}/invoices/${created.body.id}/pdf`);
      expect(first.status).toBe(200);
      const traceId = randomBytes(16).toString('hex');
      const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
      const revalidated = await ws.api.get(`${ws.base}/invoices/${created.body.id}/pdf`, { headers: { 'if-none-match': first.headers.get('etag')!, traceparent } });
      expect(revalidated.status).toBe(304);
      const requestId = revalidated.headers.get('x-request-id');
      const text = await scrape(gatewayMetrics());
      expect(sample(text, 'invoicing_http_requests_total', { method: 'GET', route: PDF_ROUTE, status: '304' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'invoicing_http_request_duration_seconds_count', { method: 'GET', route: PDF_ROUTE, status: '200' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'invoicing_rate_limit_decisions_total', { bucket: 'pdf', outcome: 'allowed' })).toBeGreaterThanOrEqual(2);
      expect(sample(text, 'invoicing_grpc_client_handled_total', { grpc_service: 'invoicing.rendering.v1.RenderingService', grpc_code: 'OK' })).toBeGreaterThanOrEqual(2);
      const logged = await accessLine(requestId);
      expect(logged).toMatchObject({ method: 'GET', route: PDF_ROUTE, status: 304, account_id: ws.id });
      await eventually(async () => {
        const ofTrace = otlp.spans.filter((span) => span.traceId === traceId);
        const http = ofTrace.find((span) => span.kind === SPAN_KIND.SERVER && span.attributes['http.route'] === PDF_ROUTE);
        expect(http).toBeDefined();
        expect(http!.parentSpanId).toBe(traceparent.split('-')[2]);
        const rpc = ofTrace.find((span) => span.kind === SPAN_KIND.CLIENT && span.name.startsWith('invoicing.rendering.v1.RenderingService/'));
        expect(rpc?.parentSpanId).toBe(http!.spanId);
      }, 30_000);
    });
  });

  describe('access log', () => {
    it('one line per request: request id, method, route, status, duration, credential id and account — never the token', async () => {
      const res = await ws.api.get(`${ws.base}/invoices/999997`);
      const requestId = res.headers.get('x-request-id');
      const email = `${randomBytes(4).toString('hex')}@example.com`;
      const password = `pw-${randomBytes(12).toString('hex')}`;
      await system.cli('user', 'create', '--email', email, '--password', password, '--name', 'Log Reader');
      const signIn = await ws.api.post('/api/v1/auth/sign_in', { email, password }, { token: null });
      expect(signIn.status).toBe(200);
      const session = signIn.body.token as string;
      expect((await ws.api.as(session).get('/api/v1/user/accounts')).status).toBe(200);
      const line = await accessLine(requestId);
      expect(line).toMatchObject({ method: 'GET', route: INVOICE_ROUTE, path: `${ws.base}/invoices/999997`, status: 404, account_id: ws.id });
      expect(typeof line.duration_ms).toBe('number');
      expect(line.credential_id).toMatch(/\S/);
      const output = system.output();
      expect(output).not.toContain(ws.pat);
      expect(output).not.toContain(session);
      expect(output).not.toContain(password);
      // A session is named by its id too.
      await eventually(async () => {
        const sessionLine = system
          .output()
          .split('\n')
          .filter((l) => l.includes('"msg":"request"') && l.includes('"route":"/api/v1/user/accounts"'))
          .map((l) => JSON.parse(l))
          .find((entry) => entry.credential_id && entry.credential_id !== line.credential_id);
        expect(sessionLine).toBeDefined();
      });
      expect(system.output()).not.toContain(session);
    });
  });
});
