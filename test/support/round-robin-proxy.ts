// The load balancer in front of the gateway replicas in cluster mode (docs/cluster.md): a small HTTP
// proxy on loopback that sends each request to the next gateway in turn, as a Kubernetes Service or
// an Ingress does, streaming bodies both ways. A gateway that refuses the connection (killed, not yet
// up) is skipped and the request goes to the next one — safe for any method, the refused gateway never
// saw a byte; a gateway that dies mid-request yields a 502 the client retries (under its
// Idempotency-Key for writes).
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

  /**
   * Sends `req` to the next upstream, streaming its body as it arrives — as a Service or an Ingress
   * does: a gateway can answer before the body is complete (413/422 on a size limit, counted on the
   * fly), and a client that waits for that answer before sending the rest must get it. Until the
   * upstream's connection is established the body read so far is held in `held`, so a refused
   * connection is retried on the next gateway with nothing lost; once connected it flows through.
   */
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, tried: Set<number>, held: { chunks: Buffer[]; ended: boolean; onData: (chunk: Buffer) => void }): void => {
    const port = pick(tried)!;
    tried.add(port);
    let answered = false;
    const upstream = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: endToEnd(req.headers), agent }, (answer) => {
      forwarded.set(port, (forwarded.get(port) ?? 0) + 1);
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.once('end', () => (answered = true));
      // The gateway died mid-answer: the client must see a broken answer, not a short one.
      answer.once('close', () => answered || res.destroy());
      answer.pipe(res);
    });
    const connected = () => {
      req.off('data', held.onData);
      for (const chunk of held.chunks) upstream.write(chunk);
      held.chunks = [];
      if (held.ended) upstream.end();
      else req.pipe(upstream);
    };
    upstream.once('socket', (socket: net.Socket) => (socket.connecting ? socket.once('connect', connected) : connected()));
    upstream.once('error', (err: NodeJS.ErrnoException) => {
      req.unpipe(upstream);
      // Once an answer has begun, it decides (above): a gateway may answer and close before the whole
      // body was sent (a size limit), and that answer stands.
      if (res.headersSent) return;
      if (err.code === 'ECONNREFUSED' && tried.size < upstreams.length) return forward(req, res, tried, held);
      res.writeHead(502, { 'content-type': 'application/json' });
      const requestId = `proxy_${randomUUID()}`;
      res.end(JSON.stringify({ error: { code: 'bad_gateway', message: `gateway at port ${port}: ${err.code ?? err.message}`, request_id: requestId } }));
    });
  };

  const server = http.createServer((req, res) => {
    const held = { chunks: [] as Buffer[], ended: false, onData: (chunk: Buffer) => held.chunks.push(chunk) };
    req.on('data', held.onData);
    req.once('end', () => (held.ended = true));
    forward(req, res, new Set(), held);
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
