// Load generator of the benchmark, run as its own process (pinned to core 1 by run.ts): N keep-alive
// HTTP/1.1 connections on raw sockets, each sending its next request as soon as the previous answer
// is complete (closed loop). Far cheaper per request than node:http's client, so it does not become
// the bottleneck of the fastest baseline. Prints "measure-start" / "measure-end" lines (run.ts samples
// CPU counters on them) and finally one JSON line with the result.
// With `paths` (e.g. one draft per issue), each request takes the next path and a connection ends when
// none is left; the measured window then runs until the last answer, and every request sent in it is
// counted, however long it took (a slow issue is a result, not something to cut off).
import net from 'node:net';
import { performance } from 'node:perf_hooks';

export interface LoadConfig {
  port: number;
  method: 'GET' | 'POST';
  path: string;
  /** Each request takes the next of these instead of `path`; sending stops when none is left or the window ends. */
  paths?: string[];
  headers: Record<string, string>;
  body?: string;
  /** POST: every request gets `Idempotency-Key: <prefix><n>` (a new key each time). */
  keyPrefix?: string;
  /**
   * Count every answer that arrives in the window, also to a request sent before it. By default only
   * requests sent in the window count, which misses the first p50 of the window: negligible for 1 s
   * slices of millisecond requests, everything for requests slower than the slice (a distributed POST
   * under 50 connections). Closed loop in steady state: answers per second is the throughput.
   */
  answersInWindow?: boolean;
  connections: number;
  warmupMs: number;
  durationMs: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  /** The measured window: `durationMs`, or with `paths` from its start to the last answer. */
  measuredMs: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
  socketErrors: number;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function runLoad(config: LoadConfig, signal: (line: string) => void = () => undefined): Promise<LoadResult> {
  const fixedHead =
    ` HTTP/1.1\r\nHost: 127.0.0.1:${config.port}\r\n` +
    Object.entries(config.headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
  const body = config.body ?? '';
  const bodyLength = Buffer.byteLength(body);
  let sequence = 0;
  let nextPath = 0;
  const hasNext = () => !config.paths || nextPath < config.paths.length;
  const nextRequest = (): string => {
    let head = `${config.method} ${config.paths ? config.paths[nextPath++] : config.path}${fixedHead}`;
    if (config.keyPrefix !== undefined) head += `Idempotency-Key: ${config.keyPrefix}${sequence++}\r\n`;
    if (config.method === 'POST') head += `Content-Type: application/json\r\nContent-Length: ${bodyLength}\r\n`;
    return head + '\r\n' + body;
  };

  const started = performance.now();
  const measureStart = started + config.warmupMs;
  const measureEnd = measureStart + config.durationMs;
  let latencies = new Float64Array(1 << 16);
  let measured = 0;
  const statuses: Record<string, number> = {};
  let socketErrors = 0;
  let inMeasure = false;
  let phase: 'warmup' | 'measure' | 'over' = 'warmup';
  let measureBegan = measureStart;
  let lastAnswer = measureStart;
  const beginMeasure = () => {
    if (phase !== 'warmup') return;
    phase = 'measure';
    inMeasure = true;
    measureBegan = performance.now();
    signal('measure-start');
  };
  const endMeasure = () => {
    beginMeasure();
    if (phase !== 'measure') return;
    phase = 'over';
    inMeasure = false;
    signal('measure-end');
  };
  const startTimer = setTimeout(beginMeasure, config.warmupMs);
  // With paths, the window closes at the last answer (done() below); the timer only stops sending.
  const endTimer = config.paths ? undefined : setTimeout(endMeasure, config.warmupMs + config.durationMs);

  return new Promise((resolve) => {
    let open = config.connections;
    const done = () => {
      if (--open > 0) return;
      clearTimeout(startTimer);
      clearTimeout(endTimer);
      endMeasure(); // the last connection may close a hair before the end timer fires
      const sorted = latencies.slice(0, measured).sort();
      const measuredMs = config.paths ? Math.max(1, lastAnswer - measureBegan) : config.durationMs;
      resolve({
        requests: measured,
        rps: measured / (measuredMs / 1000),
        measuredMs,
        p50Ms: percentile(sorted, 50),
        p99Ms: percentile(sorted, 99),
        statuses,
        socketErrors,
      });
    };
    for (let c = 0; c < config.connections; c++) {
      const socket = net.connect(config.port, '127.0.0.1');
      socket.setNoDelay(true);
      let pending: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      let closed = false;
      const send = () => {
        if (!hasNext()) return void socket.end();
        sentAt = performance.now();
        socket.write(nextRequest());
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
        for (;;) {
          const headerEnd = pending.indexOf(CRLFCRLF);
          if (headerEnd < 0) return;
          const head = pending.toString('latin1', 0, headerEnd);
          // 204 and 304 never have a body (nor, from node:http, a Content-Length).
          const bodiless = / (204|304) /.test(head.slice(8, 13));
          const length = bodiless ? ['', '0'] : /\r\ncontent-length:\s*(\d+)/i.exec(head);
          if (!length) throw new Error(`response without Content-Length:\n${head}`);
          const total = headerEnd + 4 + Number(length[1]);
          if (pending.length < total) return;
          pending = pending.subarray(total);
          const now = performance.now();
          if (inMeasure && (sentAt >= measureStart || config.answersInWindow)) {
            lastAnswer = now;
            if (measured === latencies.length) {
              const grown = new Float64Array(latencies.length * 2);
              grown.set(latencies);
              latencies = grown;
            }
            latencies[measured++] = now - sentAt;
            const status = head.slice(9, 12);
            statuses[status] = (statuses[status] ?? 0) + 1;
          }
          if (now < measureEnd) send();
          else socket.end();
        }
      });
      const close = () => {
        if (closed) return;
        closed = true;
        done();
      };
      socket.on('error', () => {
        socketErrors++;
        close();
      });
      socket.on('close', close);
    }
  });
}

if (require.main === module) {
  const config = JSON.parse(process.argv[2]) as LoadConfig;
  runLoad(config, (line) => process.stdout.write(line + '\n')).then((result) => {
    process.stdout.write(JSON.stringify({ result }) + '\n');
    process.exit(0);
  });
}
