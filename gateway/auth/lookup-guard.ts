// What keeps the gateway's identity caches (principals, workspace access) within their staleness
// bound, AUTH_CACHE_TTL_MS, whatever the interleaving (docs/decisions.md, "Authentication"):
//
// - an answer is kept until `ttlMs` after its lookup *started* (what identity answered can be no older
//   than that), never `ttlMs` after it arrived: a slow lookup cannot stretch the bound;
// - an answer whose key was evicted (a revocation event) while its lookup was in flight is not kept
//   at all: it may predate the revocation, and caching it would undo the eviction for a whole TTL;
// - an answer that may be kept for less than 1 ms is not kept (lru-cache reads a ttl of 0 as "never
//   expires").
//
// Evictions are remembered only while lookups are in flight, so the bookkeeping stays bounded.

export interface Lookup {
  readonly epoch: number;
  readonly startedAt: number;
}

export class LookupGuard {
  private epoch = 0;
  private inFlight = 0;
  /** key → epoch of its last eviction, for evictions that happened while lookups were in flight. */
  private readonly evictedAt = new Map<string, number>();

  constructor(
    readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Call before asking identity; pair with exactly one finish() or abandon(). */
  start(): Lookup {
    this.inFlight += 1;
    return { epoch: this.epoch, startedAt: this.now() };
  }

  /**
   * How long the answer of `lookup` for `key` may be cached, in whole ms; 0 = do not cache it.
   * `expiresAt` (epoch ms) caps it further, e.g. at a session's own expiry.
   */
  finish(lookup: Lookup, key: string, expiresAt?: number): number {
    const evicted = this.evictedAt.get(key);
    this.abandon();
    if (evicted !== undefined && evicted > lookup.epoch) return 0;
    const now = this.now();
    let ttl = lookup.startedAt + this.ttlMs - now;
    if (expiresAt !== undefined) ttl = Math.min(ttl, expiresAt - now);
    // NaN (an unreadable expiry) fails the comparison too: not cached.
    return ttl >= 1 ? Math.floor(ttl) : 0;
  }

  /** A lookup that produced nothing to cache (an error). */
  abandon(): void {
    this.inFlight -= 1;
    if (this.inFlight === 0) this.evictedAt.clear();
  }

  /** Records that `key` was evicted: lookups in flight now must not cache their answer for it. */
  evicted(key: string): void {
    this.epoch += 1;
    if (this.inFlight > 0) this.evictedAt.set(key, this.epoch);
  }
}
