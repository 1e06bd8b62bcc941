// Sign-in attempts per e-mail address (docs/edge.md, "Rate limits"): the per-address limit alone lets
// an attacker with many addresses guess one account's password at scrypt cost to identity. Each
// address gets a few free attempts, then exponentially growing lockouts (429 with Retry-After); a
// successful sign-in forgets its failures. Attempts are counted before identity is asked, so
// concurrent guesses cannot all slip through; an attempt that does not succeed stays counted.
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { Logger } from '../../services/shared/logger';
import { HttpError } from '../http/errors';
import { BackoffPolicy, EdgeState } from '../edge/ports/edge-state';

/** The address as identity matches it (trimmed, lower case), hashed: no e-mail addresses at rest in the edge state. */
export function signInSubject(email: string): string {
  return 'signin:' + createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');
}

export class SignInThrottle {
  private lastFailureLog = 0;

  constructor(
    private readonly state: EdgeState,
    private readonly policy: BackoffPolicy,
    private readonly log: Logger,
  ) {}

  /** Runs `signIn` unless `email` is locked out (429); `res` gets the lockout's headers. */
  async guard<T>(email: string, res: Response, signIn: () => Promise<T>): Promise<T> {
    const key = signInSubject(email);
    const outcome = await this.state.attempt(key, this.policy).catch((err: unknown) => {
      this.unavailable(err); // fail open, like the rate limiter: the per-address limit still applies
      return undefined;
    });
    if (outcome && !outcome.allowed) {
      const retryAfter = String(Math.ceil(outcome.retryAfterMs / 1000));
      res.setHeader('X-RateLimit-Limit', String(this.policy.freeAttempts));
      res.setHeader('X-RateLimit-Remaining', '0');
      res.setHeader('X-RateLimit-Reset', retryAfter);
      res.setHeader('Retry-After', retryAfter);
      throw new HttpError(429, 'rate_limited', `too many sign-in attempts for this e-mail address; retry in ${retryAfter} s`);
    }
    const result = await signIn();
    if (outcome) await this.state.clearAttempts(key).catch((err: unknown) => this.unavailable(err));
    return result;
  }

  private unavailable(err: unknown): void {
    const now = Date.now();
    if (now - this.lastFailureLog > 10_000) {
      this.lastFailureLog = now;
      this.log.error({ err: err instanceof Error ? err.message : String(err) }, 'sign-in throttle unavailable; attempts pass unthrottled');
    }
  }
}
