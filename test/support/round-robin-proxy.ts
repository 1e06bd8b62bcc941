// The load balancer in front of the gateway replicas in cluster mode (docs/cluster.md): a small HTTP
// proxy on loopback that sends each request to the next gateway in turn, as a Kubernetes Service or
// an Ingress does. A gateway that refuses the connection (killed, not yet up) is skipped and the
// request goes to the next one — safe for any method, the refused gateway never saw a byte; a gateway
// that dies mid-request yields a 502 the client retries (under its Idempotency-Key for writes).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';

export interface RoundRobinProxy {
  url: string;
  /** Replaces the upstreams (after a restart the gateways listen on new ports). */
  setUpstreams(ports: number[]): void;
  /** Requests forwarded so far, by upstream port: how the load spread. */
  forwarded: Map<number, number>;
  close(): Promise<void>;
}

// Hop-by-hop headers (RFC 9110 §7.6.1) stay on their own hop.
const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !hopByHop.has(name)));
}

export async function startRoundRobinProxy(initialPorts: number[]): Promise<RoundRobinProxy> {
  let upstreams = [...initialPorts];
  let next = 0;
  const forwarded = new Map<number, number>();
  const agent = new http.Agent({ keepAlive: true });

  /** The next upstream in turn that this request has not tried yet (concurrent requests share the turn). */
  const pick = (tried: Set<number>): number | undefined => {
    for (let i = 0; i < upstreams.length; i++) {
      const port = upstreams[next++ % upstreams.length];
      if (!tried.has(port)) return port;
    }
    return undefined;
  };

  const forward = (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse, tried: Set<number>): void => {
    const port = pick(tried)!;
    tried.add(port);
    const upstream = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: { ...endToEnd(req.headers), 'content-length': String(body.length) }, agent },
      (answer) => {
        forwarded.set(port, (forwarded.get(port) ?? 0) + 1);
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.once('error', (err: NodeJS.ErrnoException) => {
      if (res.headersSent) return res.destroy(err);
      if (err.code === 'ECONNREFUSED' && tried.size < upstreams.length) return forward(req, body, res, tried);
      res.writeHead(502, { 'content-type': 'application/json' });
      const requestId = `proxy_${randomUUID()}`;
      res.end(JSON.stringify({ error: { code: 'bad_gateway', message: `gateway at port ${port}: ${err.code ?? err.message}`, request_id: requestId } }));
    });
    upstream.end(body);
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    // Buffered so that a refused connection can be replayed on the next gateway.
    req.on('end', () => forward(req, Buffer.concat(chunks), res, new Set()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded,
    setUpstreams: (ports) => {
      upstreams = [...ports];
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
