// A loopback OTLP/HTTP collector for tracing tests: accepts the JSON export requests of
// @opentelemetry/exporter-trace-otlp-http at POST /v1/traces and keeps the spans, with the service
// (resource service.name) that sent each.
import http from 'node:http';
import { AddressInfo } from 'node:net';

export interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

export interface OtlpStub {
  endpoint: string;
  spans: CollectedSpan[];
  close(): Promise<void>;
}

/** Ids arrive as hex (the exporter's JSON encoding) or base64 (protobuf JSON mapping): always hex here. */
const hex = (id: unknown): string => (typeof id !== 'string' || id === '' ? '' : /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex'));

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: AnyValue | undefined) => v?.stringValue ?? v?.intValue ?? v?.boolValue ?? v?.doubleValue;
const attributesOf = (list: Array<{ key: string; value: AnyValue }> | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

export async function startOtlpStub(): Promise<OtlpStub> {
  const spans: CollectedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        for (const rs of body.resourceSpans ?? []) {
          const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({ service, traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: hex(s.parentSpanId), name: s.name, kind: s.kind, attributes: attributesOf(s.attributes) });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
