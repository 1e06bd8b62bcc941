// Settings of the edge policies, read from the environment (fail fast on nonsense values).
import { ConfigError, readEnv } from '../../services/shared/config';
import { parseTrustProxy, TrustedProxies } from './client-address';
import { BackoffPolicy } from './ports/edge-state';

export interface EdgeConfig {
  rateLimit: {
    /** Length of a fixed window, starting at the window's first request (default 60 s). */
    windowMs: number;
    /** Requests per window per credential for every API operation but the invoice PDF (default 300). */
    general: number;
    /** Requests per window per credential for GET …/invoices/<id>/pdf, counted separately (default 30). */
    pdf: number;
    /**
     * Requests per window per client address for requests without a valid credential: no or a
     * malformed credential, sign-ins, and credentials identity refused (default 300).
     */
    anonymous: number;
    /** TRUST_PROXY: proxies whose X-Forwarded-For is believed (default: none, the socket's peer is the client). */
    trustProxy: TrustedProxies;
  };
  /** Sign-in attempts per e-mail address: free attempts, then exponential lockouts (429 + Retry-After). */
  signIn: BackoffPolicy;
  idempotency: {
    /** How long a completed response is kept and replayed (default 24 h). */
    ttlMs: number;
    /**
     * Lease of the in-progress marker; renewed every lease/3 while the request runs (default 5 s): a
     * dead owner's marker expires within one lease. Short is safe because the services record the key
     * with their write (a re-execution answers the first result).
     */
    leaseMs: number;
  };
  /** EDGE_TEST_HOOKS=1: test-only routes and latches (gateway/edge/test-hooks.ts); refused in production. */
  testHooks: boolean;
  /** Prefix of the gateway's Redis keys (default "inv:edge:"). */
  redisKeyPrefix: string;
}

export function readEdgeConfig(env: NodeJS.ProcessEnv = process.env): EdgeConfig {
  const { int, str } = readEnv(env);
  const positive = (name: string, fallback: number) => {
    const value = int(name, fallback);
    if (value < 1) throw new ConfigError(`${name} must be at least 1`);
    return value;
  };
  const testHooks = env.EDGE_TEST_HOOKS === '1';
  if (testHooks && env.NODE_ENV === 'production') throw new ConfigError('EDGE_TEST_HOOKS must not be set in production');
  const leaseMs = positive('IDEMPOTENCY_LEASE_MS', 5_000);
  if (leaseMs < 300) throw new ConfigError('IDEMPOTENCY_LEASE_MS must be at least 300');
  return {
    rateLimit: {
      windowMs: positive('RATE_LIMIT_WINDOW_MS', 60_000),
      general: positive('RATE_LIMIT_GENERAL', 300),
      pdf: positive('RATE_LIMIT_PDF', 30),
      anonymous: positive('RATE_LIMIT_ANONYMOUS', 300),
      trustProxy: parseTrustProxy(str('TRUST_PROXY', '')),
    },
    signIn: {
      freeAttempts: positive('SIGN_IN_FREE_ATTEMPTS', 5),
      baseLockMs: positive('SIGN_IN_LOCKOUT_MS', 1_000),
      maxLockMs: positive('SIGN_IN_MAX_LOCKOUT_MS', 15 * 60 * 1000),
      forgetMs: positive('SIGN_IN_FORGET_MS', 60 * 60 * 1000),
    },
    idempotency: { ttlMs: positive('IDEMPOTENCY_TTL_MS', 24 * 60 * 60 * 1000), leaseMs },
    testHooks,
    redisKeyPrefix: str('EDGE_REDIS_PREFIX', 'inv:edge:'),
  };
}
