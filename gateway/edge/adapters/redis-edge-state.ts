// Redis adapter of the edge-state port, shared by every gateway replica. Each operation is one Lua
// script, so it is atomic and costs one round trip. Values:
//   counter  rl:…   an integer (INCR) whose TTL is the rest of its window
//   backoff  ba:…   a hash {n: attempts, u: locked until (ms, Redis clock)}, TTL = lockout + forget time
//   record   idem:… "R|<owner>|{fp,rid}" while in progress (TTL = the lease), "D|{fp,rid,res}" when done
//                   (TTL = the retention window, 24 h)
// Durability (see docs/edge.md): the records must survive a Redis restart, so run Redis with
// `appendonly yes` (appendfsync everysec) and `maxmemory-policy noeviction` (or volatile-ttl).
import Redis, { RedisOptions } from 'ioredis';
import { AttemptOutcome, BackoffPolicy, BeginOutcome, EdgeState, IdempotencyClaim, StoredResponse, WindowCount } from '../ports/edge-state';

/** A kept response inside a completed record (JSON; the body base64). */
interface SerializedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const HIT = `
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}`;

// DECR keeps the key's TTL (its window); a missing or zero counter is left alone.
const REFUND = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 0`;

// ARGV: freeAttempts, baseLockMs, maxLockMs, forgetMs. Time from Redis itself, so every gateway
// replica agrees on when a lockout ends. Returns {allowed, attempts, lockMs | retryAfterMs}.
const ATTEMPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('HMGET', KEYS[1], 'n', 'u')
local n = tonumber(v[1]) or 0
local u = tonumber(v[2]) or 0
if now < u then return {0, n, u - now} end
n = n + 1
local lock = 0
local beyond = n - tonumber(ARGV[1])
if beyond >= 0 then
  lock = math.min(tonumber(ARGV[3]), tonumber(ARGV[2]) * math.pow(2, beyond))
  u = now + lock
end
redis.call('HSET', KEYS[1], 'n', n, 'u', u)
redis.call('PEXPIRE', KEYS[1], lock + tonumber(ARGV[4]))
return {1, n, lock}`;

const BEGIN = `
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;

// ARGV[1] = "R|<owner>|", the prefix of the owner's marker.
const RENEW = `
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

const COMPLETE = `
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

const RELEASE = `
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0`;

interface Scripts {
  edgeHit(key: string, windowMs: number): Promise<[number, number]>;
  edgeRefund(key: string): Promise<number>;
  edgeAttempt(key: string, free: number, baseMs: number, maxMs: number, forgetMs: number): Promise<[number, number, number]>;
  edgeBegin(key: string, marker: string, leaseMs: number): Promise<string | null>;
  edgeRenew(key: string, ownerPrefix: string, leaseMs: number): Promise<number>;
  edgeComplete(key: string, ownerPrefix: string, record: string, ttlMs: number): Promise<number>;
  edgeRelease(key: string, ownerPrefix: string): Promise<number>;
}

export interface RedisEdgeStateOptions {
  /** Prefix of every key (default "inv:edge:"); lets several deployments or test runs share a server. */
  keyPrefix?: string;
  /** Per-command timeout in ms (default 2000): a stalled Redis fails requests instead of hanging them. */
  commandTimeoutMs?: number;
}

const ownerPrefix = (owner: string) => `R|${owner}|`;

export class RedisEdgeState implements EdgeState {
  readonly kind = 'redis';

  private constructor(private readonly redis: Redis & Scripts) {}

  /** Connects and fails fast when Redis is unreachable. */
  static async connect(url: string, options: RedisEdgeStateOptions = {}): Promise<RedisEdgeState> {
    const redisOptions: RedisOptions = {
      keyPrefix: options.keyPrefix ?? 'inv:edge:',
      lazyConnect: true,
      enableAutoPipelining: true,
      maxRetriesPerRequest: 1,
      commandTimeout: options.commandTimeoutMs ?? 2000,
      connectionName: 'invoicing-gateway-edge',
    };
    const redis = new Redis(url, redisOptions);
    redis.on('error', () => undefined); // reported by the failing commands; ioredis reconnects by itself
    redis.defineCommand('edgeHit', { numberOfKeys: 1, lua: HIT });
    redis.defineCommand('edgeRefund', { numberOfKeys: 1, lua: REFUND });
    redis.defineCommand('edgeAttempt', { numberOfKeys: 1, lua: ATTEMPT });
    redis.defineCommand('edgeBegin', { numberOfKeys: 1, lua: BEGIN });
    redis.defineCommand('edgeRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('edgeComplete', { numberOfKeys: 1, lua: COMPLETE });
    redis.defineCommand('edgeRelease', { numberOfKeys: 1, lua: RELEASE });
    try {
      await redis.connect();
    } catch (err) {
      redis.disconnect();
      throw new Error(`cannot reach Redis for the edge state: ${err instanceof Error ? err.message : String(err)}`);
    }
    return new RedisEdgeState(redis as Redis & Scripts);
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, ttl] = await this.redis.edgeHit(`rl:${key}`, windowMs);
    return { count: Number(count), resetMs: Math.max(1, Number(ttl)) };
  }

  async refund(key: string): Promise<void> {
    await this.redis.edgeRefund(`rl:${key}`);
  }

  async attempt(key: string, policy: BackoffPolicy): Promise<AttemptOutcome> {
    const [allowed, attempts, ms] = await this.redis.edgeAttempt(`ba:${key}`, policy.freeAttempts, policy.baseLockMs, policy.maxLockMs, policy.forgetMs);
    return allowed === 1
      ? { allowed: true, attempts: Number(attempts), lockMs: Number(ms) }
      : { allowed: false, attempts: Number(attempts), retryAfterMs: Math.max(1, Number(ms)) };
  }

  async clearAttempts(key: string): Promise<void> {
    await this.redis.del(`ba:${key}`);
  }

  async begin(scope: string, claim: IdempotencyClaim, leaseMs: number): Promise<BeginOutcome> {
    const marker = ownerPrefix(claim.owner) + JSON.stringify({ fp: claim.fingerprint, rid: claim.requestId });
    const existing = await this.redis.edgeBegin(`idem:${scope}`, marker, leaseMs);
    if (existing === null) return { outcome: 'started' };
    if (existing.startsWith('D|')) {
      const record = JSON.parse(existing.slice(2)) as { fp: string; rid: string; res: SerializedResponse };
      return {
        outcome: 'done',
        fingerprint: record.fp,
        requestId: record.rid,
        response: { status: record.res.status, headers: record.res.headers, body: Buffer.from(record.res.body, 'base64') },
      };
    }
    const record = JSON.parse(existing.slice(existing.indexOf('|', 2) + 1)) as { fp: string; rid: string };
    return { outcome: 'running', fingerprint: record.fp, requestId: record.rid };
  }

  async renew(scope: string, owner: string, leaseMs: number): Promise<boolean> {
    return (await this.redis.edgeRenew(`idem:${scope}`, ownerPrefix(owner), leaseMs)) === 1;
  }

  async complete(scope: string, claim: IdempotencyClaim, response: StoredResponse, ttlMs: number): Promise<boolean> {
    const res: SerializedResponse = { status: response.status, headers: response.headers, body: response.body.toString('base64') };
    const record = 'D|' + JSON.stringify({ fp: claim.fingerprint, rid: claim.requestId, res });
    return (await this.redis.edgeComplete(`idem:${scope}`, ownerPrefix(claim.owner), record, ttlMs)) === 1;
  }

  async release(scope: string, owner: string): Promise<boolean> {
    return (await this.redis.edgeRelease(`idem:${scope}`, ownerPrefix(owner))) === 1;
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
