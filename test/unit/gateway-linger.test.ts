// An answer given while the request body is still arriving reaches the client: the connection is closed
// lingering (gateway/http/linger.ts), not reset under the client's feet.
import http from 'node:http';
import net from 'node:net';
import { AddressInfo } from 'node:net';
import { closeLingering } from '../../gateway/http/linger';

const MiB = 1024 * 1024;

/** A server that refuses every request on its first body chunk, as an upload screen does. */
function refusingServer(linger: boolean): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    req.once('data', () => {
      req.pause();
      if (linger) closeLingering(req, { ms: 5_000, bytes: 64 * MiB });
      res.writeHead(422, { 'Content-Type': 'application/json', Connection: 'close' });
      res.end('{"error":{"code":"file_type_not_allowed"}}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * Sends a large body as fast as the socket takes it, and only then reads what the server answered — as a
 * client does that reads its answer after its request is written (curl, most HTTP libraries).
 */
function upload(port: number, bodyBytes: number): Promise<{ answer: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let error: string | undefined;
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', (err) => {
      error = (err as NodeJS.ErrnoException).code;
      socket.resume();
    });
    socket.on('close', () => resolve({ answer, error }));
    socket.pause();
    socket.write(`POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/pdf\r\nContent-Length: ${bodyBytes}\r\n\r\n`);
    const chunk = Buffer.alloc(256 * 1024, 1);
    let sent = 0;
    const pump = () => {
      while (sent < bodyBytes && !socket.destroyed) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
      socket.resume();
    };
    pump();
  });
}

describe('closing a connection while the body arrives: the answer is never lost', () => {
  let server: http.Server;
  beforeAll(async () => {
    server = await refusingServer(true);
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('20 clients still sending 8 MiB each all read the 422, and the connection then closes', async () => {
    const { port } = server.address() as AddressInfo;
    const results = await Promise.all(Array.from({ length: 20 }, () => upload(port, 8 * MiB)));
    for (const result of results) {
      expect(result.answer).toMatch(/^HTTP\/1\.1 422 /);
      expect(result.answer).toContain('file_type_not_allowed');
    }
  });

  it('stops dropping at its byte bound: a client that never stops is cut off', async () => {
    const bounded = http.createServer((req, res) => {
      req.once('data', () => {
        closeLingering(req, { ms: 60_000, bytes: 1 * MiB });
        res.writeHead(422, { Connection: 'close' });
        res.end();
      });
    });
    await new Promise<void>((resolve) => bounded.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = bounded.address() as AddressInfo;
      // 512 MiB announced: without the bound the server would drain all of it (within its minute); it
      // cuts the connection after 1 MiB instead, and the client's write fails.
      const result = await upload(port, 512 * MiB);
      expect(['ECONNRESET', 'EPIPE']).toContain(result.error);
    } finally {
      await new Promise((resolve) => bounded.close(resolve));
    }
  });
});
