// A minimal SMTP server for the failure tests: accepts every message, except that recipients chosen by
// the test are refused — permanently (550) or temporarily (451, a given number of times) — or stalled
// (a slow relay: RCPT never answered, a given number of times), and counts what it accepted. Speaks just what nodemailer needs (EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT).
import net from 'node:net';

export interface ScriptedSmtpServer {
  url: string;
  /** Raw messages accepted (DATA), in order. */
  accepted: string[];
  /** Recipients that get 550 at RCPT. */
  reject: Set<string>;
  /** Recipient → how many more times it gets 451 at RCPT. */
  defer: Map<string, number>;
  /** Recipient → how many more times RCPT for it is never answered (the session hangs until the client gives up). */
  stall: Map<string, number>;
  /** Stalled sessions, and when the client closed each (ms since the epoch; null while open). */
  stalled: Array<{ address: string; at: number; closedAt: number | null }>;
  close(): Promise<void>;
}

export async function startScriptedSmtpServer(): Promise<ScriptedSmtpServer> {
  const script = {
    accepted: [] as string[],
    reject: new Set<string>(),
    defer: new Map<string, number>(),
    stall: new Map<string, number>(),
    stalled: [] as ScriptedSmtpServer['stalled'],
  };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer = '';
    let inData = false;
    let data: string[] = [];
    const reply = (line: string) => socket.write(`${line}\r\n`);
    reply('220 script ESMTP');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      let end: number;
      while ((end = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            script.accepted.push(data.join('\r\n'));
            data = [];
            reply('250 2.0.0 queued');
          } else data.push(line.startsWith('..') ? line.slice(1) : line);
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') reply('250-script\r\n250 8BITMIME');
        else if (verb === 'HELO') reply('250 script');
        else if (verb === 'MAIL') reply('250 2.1.0 ok');
        else if (verb === 'RCPT') {
          const address = /<([^>]*)>/.exec(line)?.[1]?.toLowerCase() ?? '';
          const deferrals = script.defer.get(address) ?? 0;
          const stalls = script.stall.get(address) ?? 0;
          if (stalls > 0) {
            script.stall.set(address, stalls - 1);
            const entry = { address, at: Date.now(), closedAt: null as number | null };
            script.stalled.push(entry);
            socket.on('close', () => (entry.closedAt = Date.now()));
            socket.removeAllListeners('data'); // hang: nothing more is read or answered
            return;
          }
          if (script.reject.has(address)) reply('550 5.1.1 <' + address + '>: mailbox unavailable');
          else if (deferrals > 0) {
            script.defer.set(address, deferrals - 1);
            reply('451 4.7.1 greylisted, try again later');
          } else reply('250 2.1.5 ok');
        } else if (verb === 'DATA') {
          inData = true;
          reply('354 go ahead');
        } else if (verb === 'RSET' || verb === 'NOOP') reply('250 ok');
        else if (verb === 'QUIT') {
          reply('221 bye');
          socket.end();
        } else reply('502 5.5.2 not implemented');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    ...script,
    url: `smtp://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
