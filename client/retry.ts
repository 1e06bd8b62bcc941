// When and how long the client waits before trying a request again (Stripe's clients are the model).
// Retried: no answer (connection refused or reset, timeout), 429 and 503 (after Retry-After), 409 for
// a request still running under the same Idempotency-Key or a write that lost a race, 504 (the API's
// gateway_timeout: a service did not answer in time) and 502/504 from a proxy in front of the API.
// Every POST carries an Idempotency-Key, so a retried POST takes effect once.

export interface RetryPolicy {
  maxRetries: number;
  /** First backoff; it doubles with every attempt, up to maxDelayMs, with jitter. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is returned at once. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 3, initialDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };

/** 409 codes that mean "try again": the first request under this key still runs; a concurrent write won. */
export const RETRYABLE_CONFLICTS = new Set(['idempotency_in_progress', 'concurrent_modification']);
const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/** Whether an answer is worth another attempt (409 needs its code, read from a clone of the body). */
export async function isRetryable(response: Response): Promise<boolean> {
  if (RETRYABLE_STATUSES.has(response.status)) return true;
  if (response.status !== 409) return false;
  try {
    const body = (await response.clone().json()) as { error?: { code?: string } };
    return RETRYABLE_CONFLICTS.has(body.error?.code ?? '');
  } catch {
    return false;
  }
}

/** Exponential backoff with "equal jitter": half the step fixed, half random, so clients spread out. */
export function backoffMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** attempt);
  return step / 2 + random() * (step / 2);
}

/** Retry-After in milliseconds (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterMs(response: Response, now: number = Date.now()): number | null {
  const value = response.headers.get('retry-after');
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
