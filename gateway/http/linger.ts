// Closing a connection whose request body is still arriving (an upload refused on its first bytes, over
// the limit, or timed out). Node closes such a connection by destroying the socket as soon as the answer
// is written; the client's bytes that arrive after that make the kernel reset the connection, and the
// reset can reach the client before it has read the answer, which is then lost (seen under load: the
// client got 0 bytes instead of its 422). So, as nginx's "lingering close": answer, half-close, keep
// reading and dropping what the client still sends, bounded in time and bytes, then close.
import type { IncomingMessage } from 'node:http';

export interface LingerBounds {
  /** How long to keep dropping the client's bytes after the answer. */
  ms: number;
  /** How many bytes to drop at most before closing regardless. */
  bytes: number;
}

export const LINGER: LingerBounds = { ms: 2_000, bytes: 16 * 1024 * 1024 };

/** Call before answering `req` with `Connection: close` while its body is still arriving. */
export function closeLingering(req: IncomingMessage, bounds: LingerBounds = LINGER): void {
  const socket = req.socket;
  if (req.complete || socket.destroyed) return;
  let dropped = 0;
  req.unpipe();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > bounds.bytes) socket.destroy();
  });
  req.resume();
  // Node's server calls destroySoon() once the answer of a `Connection: close` exchange is written.
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
    const timer = setTimeout(() => socket.destroy(), bounds.ms);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    if (req.complete) socket.destroy();
    else req.once('end', () => socket.destroy());
  };
}
