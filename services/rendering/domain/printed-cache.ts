// What a PDF request needs before rendering — the ETag, the file name, the blob key and the render
// input — kept per document so that an unchanged document answers (304, or its stored file) without
// asking the documents and identity services. An entry is used only under the very revision (the
// document's and workspace's change counters, read *before* the services were asked) it was stored
// under, so an acknowledged change — its counter bumped before the acknowledgement — is never hidden:
// any request after it reads a newer revision and asks again (docs/rendering.md, "Fresh ETags without
// asking"). The TTL, counted from when the lookup started, bounds only changes stored but never
// acknowledged (a crash between the write and its counter bump). Bounded; least recently used first out.
import { RenderInput } from './render-input';

export interface Printed {
  etag: string;
  filename: string;
  /** The blob key of the PDF of this ETag. */
  key: string;
  input: RenderInput;
}

interface Entry {
  revision: string;
  expiresAt: number;
  printed: Printed;
}

export class PrintedCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly max: number,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  get(key: string, revision: string): Printed | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.revision !== revision || entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    // Map order is insertion order: re-inserting makes it the most recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.printed;
  }

  /** `startedAt`: when the lookup began, before its revision was read. */
  set(key: string, revision: string, startedAt: number, printed: Printed): void {
    if (this.max <= 0 || this.ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { revision, expiresAt: startedAt + this.ttlMs, printed });
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}
