// When a failed attempt is worth repeating, and when. SMTP says so itself: 4xx replies are transient
// (greylisting, mailbox busy, server shutting down), 5xx are final (no such user, rejected). A server we
// cannot reach at all (refused, reset, timed out, DNS) is treated as transient: the message is fine,
// the road is not. Retries back off exponentially up to a cap and stop after a bounded number of attempts.
import type { TransportFailure } from '../ports/mail';

export interface RetryPolicy {
  /** Delay after the first failed attempt. */
  baseMs: number;
  /** No delay is longer than this. */
  maxMs: number;
  /** Attempts in all; a temporary failure on the last one fails the delivery. */
  maxAttempts: number;
}

/** Defaults: 30 s, 1 min, 2 min, … capped at 30 min; 12 attempts span about 4 hours. */
export const DEFAULT_RETRY: RetryPolicy = { baseMs: 30_000, maxMs: 30 * 60_000, maxAttempts: 12 };

export type FailureKind = 'temporary' | 'permanent';

const TRANSIENT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ESOCKET', 'ECONNECTION', 'EDNS', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EPROTOCOL', 'ETLS']);

export function classifyFailure(failure: TransportFailure): FailureKind {
  const reply = failure.responseCode;
  if (reply !== undefined && reply >= 500 && reply < 600) return 'permanent';
  if (reply !== undefined && reply >= 400 && reply < 500) return 'temporary';
  // A message the client refuses to build or address (no recipients, bad address) will never go out.
  if (failure.code === 'EENVELOPE' || failure.code === 'EMESSAGE') return 'permanent';
  if (failure.code && TRANSIENT_CODES.has(failure.code)) return 'temporary';
  // Unknown trouble (a PDF the renderer could not produce yet, a full disk): try again later.
  return 'temporary';
}

/** The pause after `attempts` failed attempts (1 → baseMs, 2 → 2 × baseMs, …, ≤ maxMs). */
export function backoffMs(attempts: number, policy: RetryPolicy): number {
  const exponent = Math.max(0, Math.min(attempts - 1, 30));
  return Math.min(policy.baseMs * 2 ** exponent, policy.maxMs);
}

/** The server's own reply when there is one ("550 5.1.1 <x@y>: mailbox unavailable"), else the error text. */
export function describeFailure(failure: TransportFailure): string {
  const text = failure.message.replace(/\s+/g, ' ').trim();
  if (!failure.responseCode) return text.slice(0, 500);
  const reply = text.indexOf(`${failure.responseCode} `);
  return (reply >= 0 ? text.slice(reply) : `${failure.responseCode} ${text}`).slice(0, 500);
}
