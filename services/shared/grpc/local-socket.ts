// The embedded mode's gRPC listens on Unix sockets, never on TCP: a socket in a directory only this user
// can enter, itself 0600, so no other local account (nor a browser page, nor anything that can only open
// TCP connections) reaches the services or the admin services — only this user's processes, i.e. the CLI
// (docs/architecture.md "Internal network"). The sockets are recorded in DATA_DIR/runtime.json.
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** sun_path holds 108 bytes with its NUL on Linux, 104 on macOS: stay under both. */
const MAX_SOCKET_PATH = 100;
/** The longest name a socket gets in the directory (`<module>-admin.sock`). */
const LONGEST_NAME = 'documents-admin.sock';

export interface SocketDirectory {
  dir: string;
  /** The socket of `name` (a module's, or `<module>-admin`), stale files of a crashed run removed. */
  socket(name: string): string;
  /** Removes a directory that was made outside DATA_DIR (the sockets are gone with their servers). */
  remove(): void;
}

/**
 * DATA_DIR/grpc, mode 0700. When that path is too long for a socket address, a private temporary
 * directory (mkdtemp, 0700) instead; runtime.json says which.
 */
export function privateSocketDirectory(dataDir: string): SocketDirectory {
  const preferred = path.join(dataDir, 'grpc');
  const fits = Buffer.byteLength(path.join(preferred, LONGEST_NAME)) <= MAX_SOCKET_PATH;
  const dir = fits ? preferred : mkdtempSync(path.join(os.tmpdir(), 'invoicing-grpc-'));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // An existing directory keeps its mode through mkdir: set it.
  chmodSync(dir, 0o700);
  return {
    dir,
    socket: (name) => {
      const file = path.join(dir, `${name}.sock`);
      // A socket left by a killed process makes bind fail with EADDRINUSE.
      if (existsSync(file) && lstatSync(file).isSocket()) unlinkSync(file);
      return file;
    },
    remove: () => {
      if (!fits) rmSync(dir, { recursive: true, force: true });
    },
  };
}
