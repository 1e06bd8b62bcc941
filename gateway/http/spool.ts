// Where upload bodies wait while they are received and fingerprinted (gateway/http/upload.ts): private
// files in a directory of the gateway's own (UPLOAD_SPOOL_DIR, default DATA_DIR/spool; the chart points
// it into the pod's emptyDir), never the host's shared temporary directory (docs/edge.md "Uploads").
//
// A spool file is deleted however its request ends — success, refusal, client gone, timeout, a failed
// call, a thrown error: discard() closes whatever has the file open (the writer, readers) and removes
// it, and does not depend on any stream finishing. A crash leaves files behind: their names carry the
// process id (`<pid>-<uuid>`), and a gateway starting on the directory removes those of processes that
// no longer run, and its own pid's (a restarted container is pid 1 again), so replicas sharing a
// directory never remove each other's files in flight.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, ReadStream, WriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { readEnv } from '../../services/shared/config';

export interface UploadOptions {
  /** UPLOAD_SPOOL_DIR: the directory of spool files (default DATA_DIR/spool, DATA_DIR defaulting to .data). */
  spoolDir: string;
  /** UPLOAD_TIMEOUT_MS: the longest an upload's body may take to arrive (default 120 s), then 408. */
  timeoutMs: number;
}

export function readUploadOptions(env: NodeJS.ProcessEnv = process.env): UploadOptions {
  const { str, int, optional } = readEnv(env);
  return {
    spoolDir: path.resolve(optional('UPLOAD_SPOOL_DIR') ?? path.join(str('DATA_DIR', '.data'), 'spool')),
    timeoutMs: Math.max(1, int('UPLOAD_TIMEOUT_MS', 120_000)),
  };
}

const NAME = /^(\d+)-[0-9a-f-]{36}$/;

/** Whether process `pid` runs (on this host): signal 0 checks without signalling; EPERM means it runs as another user. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class UploadSpool {
  private constructor(readonly dir: string) {}

  /** Creates the directory (0700) and removes the files crashed processes left in it; resolves with their count. */
  static async open(dir: string): Promise<{ spool: UploadSpool; removed: number }> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    let removed = 0;
    for (const name of await readdir(dir)) {
      const owner = NAME.exec(name);
      if (!owner) continue;
      const pid = Number(owner[1]);
      if (pid !== process.pid && running(pid)) continue;
      await rm(path.join(dir, name), { force: true });
      removed++;
    }
    return { spool: new UploadSpool(dir), removed };
  }

  create(): SpoolFile {
    return new SpoolFile(path.join(this.dir, `${process.pid}-${randomUUID()}`));
  }
}

export class SpoolFile {
  readonly writer: WriteStream;
  private readonly readers = new Set<ReadStream>();
  private discarded?: Promise<void>;

  constructor(readonly path: string) {
    this.writer = createWriteStream(path, { mode: 0o600 });
    // Errors surface to whoever waits on the writer; an unobserved one must not crash the process.
    this.writer.on('error', () => undefined);
  }

  /** The file's bytes from the start, in chunks of `chunkBytes`; closed by discard() if still open. */
  read(chunkBytes: number): ReadStream {
    const reader = createReadStream(this.path, { highWaterMark: chunkBytes });
    this.readers.add(reader);
    reader.once('close', () => this.readers.delete(reader));
    return reader;
  }

  /** Closes every stream on the file, then removes it. Idempotent; never rejects. */
  discard(): Promise<void> {
    this.discarded ??= (async () => {
      // The writer opens the file asynchronously: removing it before that open would let the open
      // create it again. Waiting for its close (after destroy) orders the removal after any open.
      await Promise.all([this.writer, ...this.readers].map(closed));
      await rm(this.path, { force: true }).catch(() => undefined);
    })();
    return this.discarded;
  }
}

/** Destroys a file stream and resolves once its descriptor is closed (or was never opened). */
function closed(stream: { closed: boolean; destroy(): void; once(event: 'close', listener: () => void): unknown }): Promise<void> {
  if (stream.closed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('close', () => resolve());
    stream.destroy();
  });
}
