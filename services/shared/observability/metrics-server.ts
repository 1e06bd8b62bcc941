// The /metrics endpoint of a process: its own small HTTP listener on METRICS_PORT (default 9464; 0 turns it
// off), bound to METRICS_HOST (default 127.0.0.1, like GRPC_HOST and HOST; the chart sets 0.0.0.0 in pods),
// so scrapes never share the API's port, its rate limits or its access log. An embedded process serves
// its one registry (every service and the gateway) here too.
import http from 'node:http';
import { readEnv } from '../config';
import { Logger } from '../logger';
import { collectProcessMetrics, registry } from './metrics';

export const DEFAULT_METRICS_PORT = 9464;

export interface MetricsServer {
  /** The bound port; undefined when metrics are off or the port could not be bound. */
  port?: number;
  close(): Promise<void>;
}

export async function startMetricsServer(log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<MetricsServer> {
  const { int, optional } = readEnv(env);
  const port = int('METRICS_PORT', DEFAULT_METRICS_PORT);
  if (port === 0) return { close: async () => undefined };
  const host = optional('METRICS_HOST') ?? '127.0.0.1';
  collectProcessMetrics();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found; metrics are at /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: unknown) => {
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'metrics collection failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n');
      },
    );
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    // Metrics are not worth a crash loop: the process serves without them, loudly (a scrape target
    // that is down is what Prometheus alerts on: up == 0).
    log.error({ err: err instanceof Error ? err.message : String(err), port, host }, 'metrics endpoint could not be bound; serving without /metrics');
    return { close: async () => undefined };
  }
  server.unref();
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  log.info({ port: bound, host }, 'metrics endpoint listening');
  return {
    port: bound,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
