// The bench's load generator (test/bench/load.ts): what it counts. The distributed bench relies on two
// of its modes — one path per request (a draft per issue) and answers counted when they arrive in the
// window (requests slower than a slice) — checked here against a server the test holds with hooks.
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { runLoad } from '../bench/load';

interface Held {
  url: string;
  res: http.ServerResponse;
}

/** A server that holds every request until the test answers it. */
async function holdingServer(): Promise<{ port: number; held: Held[]; answer(held: Held): void; close(): Promise<void> }> {
  const held: Held[] = [];
  const server = http.createServer((req, res) => held.push({ url: req.url ?? '', res }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    held,
    answer: ({ res }) => res.writeHead(200, { 'Content-Length': 2 }).end('{}'),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('load generator: one path per request (paths)', () => {
  it('requests every path once, ends when none is left, and counts every answer however late', async () => {
    const server = await holdingServer();
    const paths = Array.from({ length: 7 }, (_, i) => `/invoices/${i + 1}/issue`);
    const seen: string[] = [];
    // Answer each request as it arrives: the generator's 3 connections walk the list.
    const answering = setInterval(() => {
      for (const h of server.held.splice(0)) {
        seen.push(h.url);
        server.answer(h);
      }
    }, 5);
    try {
      const result = await runLoad({ port: server.port, method: 'POST', path: '', paths, headers: {}, connections: 3, warmupMs: 0, durationMs: 60_000 });
      expect(seen.sort()).toEqual([...paths].sort());
      expect(result.requests).toBe(7);
      expect(result.statuses).toEqual({ '200': 7 });
      expect(result.measuredMs).toBeLessThan(60_000); // the window closed at the last answer, not at durationMs
    } finally {
      clearInterval(answering);
      await server.close();
    }
  });
});

describe('load generator: answers arriving in the window (answersInWindow)', () => {
  /** Answers the requests sent before the window once it opens, and the later ones once it has closed. */
  const run = async (answersInWindow: boolean) => {
    const server = await holdingServer();
    try {
      return await runLoad(
        { port: server.port, method: 'GET', path: '/slow', headers: {}, connections: 2, warmupMs: 100, durationMs: 2000, answersInWindow },
        (line) => {
          if (line === 'measure-start' || line === 'measure-end') for (const h of server.held.splice(0)) server.answer(h);
        },
      );
    } finally {
      await server.close();
    }
  };

  it('counts the answers to requests sent before the window when asked', async () => {
    expect((await run(true)).requests).toBe(2);
  });

  it('by default counts only requests sent in the window: none of these completed in it', async () => {
    expect((await run(false)).requests).toBe(0);
  });
});
