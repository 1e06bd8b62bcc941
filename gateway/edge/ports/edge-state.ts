// The edge-state port: the little shared state the gateway's edge policies need across replicas —
// fixed-window request counters (rate limits), attempt backoff (sign-in per e-mail) and idempotency
// records. Two adapters: embedded
// (counters in memory, records in SQLite under DATA_DIR) and Redis (everything in Redis, shared by
// every gateway replica). Both pass the same contract suite (test/contract/edge-state.contract.ts).

/** One counted request in a fixed window that starts with the window's first request. */
export interface WindowCount {
  /** Requests counted in the current window, this one included (1 for the first). */
  count: number;
  /** Milliseconds until the window ends and the count starts again from zero (> 0). */
  resetMs: number;
}

/** Exponential backoff of attempts under one key (e.g. sign-ins of one e-mail address). */
export interface BackoffPolicy {
  /** Attempts allowed before the first lockout. */
  freeAttempts: number;
  /** Lockout after the last free attempt; it doubles with every further attempt. */
  baseLockMs: number;
  /** Cap of one lockout. */
  maxLockMs: number;
  /** The attempts are forgotten this long after the last one (or its lockout) ended. */
  forgetMs: number;
}

/**
 * The outcome of attempt(): `allowed` — counted (`attempts`, this one included) and, once past the
 * free attempts, the key is locked for `lockMs` from now; or refused while locked, `retryAfterMs` left.
 */
export type AttemptOutcome = { allowed: true; attempts: number; lockMs: number } | { allowed: false; attempts: number; retryAfterMs: number };

/** A response as the idempotency layer stores and replays it. */
export interface StoredResponse {
  status: number;
  /** Lower-case header names; only the headers that matter for a replay (content-type, location, etag, …). */
  headers: Record<string, string>;
  /** Raw body bytes; empty for a response without body. */
  body: Buffer;
}

/** What a caller claims when it starts executing a request under an idempotency key. */
export interface IdempotencyClaim {
  /** Hash of method, path and raw body: a different request under the same key does not match. */
  fingerprint: string;
  /** Random per attempt: only the owner may renew, complete or release its marker. */
  owner: string;
  /** Request id of the attempt, replayed as X-Original-Request-Id. */
  requestId: string;
}

/**
 * The outcome of begin():
 * - `started`: no live record existed; the caller now holds an in-progress marker for `leaseMs`.
 * - `running`: another attempt holds a live in-progress marker.
 * - `done`: a completed record exists; `response` is what the first attempt answered.
 */
export type BeginOutcome =
  | { outcome: 'started' }
  | { outcome: 'running'; fingerprint: string; requestId: string }
  | { outcome: 'done'; fingerprint: string; requestId: string; response: StoredResponse };

export interface EdgeState {
  /** 'embedded' or 'redis', for logs and the benchmark report. */
  readonly kind: string;

  /**
   * Counts one request against `key` in a fixed window of `windowMs` that starts at the first
   * request of the window. Atomic: concurrent hits from any number of replicas get distinct counts.
   */
  hit(key: string, windowMs: number): Promise<WindowCount>;

  /**
   * Takes back one request counted under `key` in its current window (a request first charged to
   * the client address that turned out to carry a valid credential). Never below 0; never opens or
   * moves a window.
   */
  refund(key: string): Promise<void>;

  /**
   * Atomically: refuses while `key` is locked; otherwise counts the attempt (up front, so concurrent
   * attempts cannot all pass) and, when it is beyond `policy.freeAttempts − 1` earlier ones, locks the
   * key for min(maxLockMs, baseLockMs · 2^(attempts − freeAttempts)). Attempts count until
   * clearAttempts (a success) or until forgotten (`forgetMs` after the last lockout ends).
   */
  attempt(key: string, policy: BackoffPolicy): Promise<AttemptOutcome>;

  /** Forgets the attempts and any lockout of `key` (the attempt succeeded). */
  clearAttempts(key: string): Promise<void>;

  /**
   * Atomically: if `scope` has a live record (completed and not yet expired, or in progress with an
   * unexpired lease) answer it; otherwise write an in-progress marker owned by `claim.owner` that
   * expires after `leaseMs` unless renewed, and answer `started`.
   */
  begin(scope: string, claim: IdempotencyClaim, leaseMs: number): Promise<BeginOutcome>;

  /** Extends the owner's live in-progress marker to `leaseMs` from now; false when there is none. */
  renew(scope: string, owner: string, leaseMs: number): Promise<boolean>;

  /**
   * Writes the completed record (claim's fingerprint and request id, the response), kept for `ttlMs`,
   * in place of the claim owner's in-progress marker — or in an empty scope, when that marker expired
   * unclaimed. False, and nothing written, when another attempt holds a live record (the lease
   * expired and another attempt took the scope over).
   */
  complete(scope: string, claim: IdempotencyClaim, response: StoredResponse, ttlMs: number): Promise<boolean>;

  /** Deletes the owner's live in-progress marker (the attempt stores nothing); false when there is none. */
  release(scope: string, owner: string): Promise<boolean>;

  /** Resolves when the state answers (a round trip to Redis; a read of the SQLite file); the gateway's /readyz. */
  ping(): Promise<void>;

  close(): Promise<void>;
}
