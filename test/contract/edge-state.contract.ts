// Contract of the edge-state port (gateway/edge/ports/edge-state.ts), run against every adapter:
// edge-state.embedded.test.ts (SQLite + memory) and edge-state.real.test.ts (Redis).
import { randomBytes, randomUUID } from 'node:crypto';
import { BackoffPolicy, EdgeState, IdempotencyClaim, StoredResponse } from '../../gateway/edge/ports/edge-state';

export interface EdgeStateHarness {
  /** A fresh state handle; every handle of one harness shares the same records. */
  open(): Promise<EdgeState>;
  /** Whether rate-limit counters are shared between handles (Redis) or per process (embedded). */
  sharedCounters: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const scope = () => `scope-${randomUUID()}`;
const claim = (fingerprint = 'fp-1'): IdempotencyClaim => ({ fingerprint, owner: randomUUID(), requestId: `req_${randomBytes(8).toString('hex')}` });
const response = (overrides: Partial<StoredResponse> = {}): StoredResponse => ({
  status: 201,
  headers: { 'content-type': 'application/json; charset=utf-8', location: '/api/v1/things/1', etag: '"v1"' },
  body: Buffer.from('{"id":1}'),
  ...overrides,
});

export function edgeStateContract(harness: EdgeStateHarness): void {
  let state: EdgeState;
  let peer: EdgeState;
  const opened: EdgeState[] = [];
  const open = async () => {
    const handle = await harness.open();
    opened.push(handle);
    return handle;
  };

  beforeAll(async () => {
    state = await open();
    peer = await open();
  });
  afterAll(async () => {
    for (const handle of opened) await handle.close();
  });

  describe('ping', () => {
    it('resolves while the state answers, and rejects once it is closed', async () => {
      const handle = await harness.open();
      await expect(handle.ping()).resolves.toBeUndefined();
      await handle.close();
      await expect(handle.ping()).rejects.toThrow();
    });
  });

  describe('hit: fixed-window counters', () => {
    it('counts from 1 in a window that starts with its first request and reports the time left', async () => {
      const key = `k-${randomUUID()}`;
      const first = await state.hit(key, 60_000);
      expect(first.count).toBe(1);
      expect(first.resetMs).toBeGreaterThan(59_000);
      expect(first.resetMs).toBeLessThanOrEqual(60_000);
      await sleep(20);
      const second = await state.hit(key, 60_000);
      expect(second.count).toBe(2);
      expect(second.resetMs).toBeLessThan(first.resetMs); // the window does not move with later requests
    });

    it('keeps keys apart', async () => {
      const [a, b] = [`a-${randomUUID()}`, `b-${randomUUID()}`];
      await state.hit(a, 60_000);
      await state.hit(a, 60_000);
      expect((await state.hit(b, 60_000)).count).toBe(1);
      expect((await state.hit(a, 60_000)).count).toBe(3);
    });

    it('starts a new window once the current one ends', async () => {
      const key = `w-${randomUUID()}`;
      await state.hit(key, 200);
      await state.hit(key, 200);
      await sleep(260);
      const next = await state.hit(key, 200);
      expect(next.count).toBe(1);
      expect(next.resetMs).toBeGreaterThan(100);
    });

    it('gives concurrent hits distinct counts (atomic)', async () => {
      const key = `c-${randomUUID()}`;
      const handles = harness.sharedCounters ? [state, peer] : [state];
      const counts = await Promise.all(Array.from({ length: 60 }, (_, i) => handles[i % handles.length].hit(key, 60_000)));
      expect(counts.map((c) => c.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    });
  });

  describe('refund: a request charged to the wrong subject', () => {
    it('takes one request back from the current window, without moving it', async () => {
      const key = `r-${randomUUID()}`;
      await state.hit(key, 60_000);
      const second = await state.hit(key, 60_000);
      await state.refund(key);
      const third = await state.hit(key, 60_000);
      expect(third.count).toBe(2);
      expect(third.resetMs).toBeLessThanOrEqual(second.resetMs);
    });

    it('never goes below zero and never opens a window', async () => {
      const key = `r0-${randomUUID()}`;
      await state.refund(key);
      expect((await state.hit(key, 60_000)).count).toBe(1);
      await state.refund(key);
      await state.refund(key);
      expect((await state.hit(key, 60_000)).count).toBe(1);
    });
  });

  describe('attempt: exponential backoff', () => {
    const policy: BackoffPolicy = { freeAttempts: 3, baseLockMs: 300, maxLockMs: 500, forgetMs: 60_000 };

    it('allows the free attempts, then locks for the base time, doubling (capped) with each further attempt', async () => {
      const key = `b-${randomUUID()}`;
      expect(await state.attempt(key, policy)).toEqual({ allowed: true, attempts: 1, lockMs: 0 });
      expect(await state.attempt(key, policy)).toEqual({ allowed: true, attempts: 2, lockMs: 0 });
      expect(await state.attempt(key, policy)).toEqual({ allowed: true, attempts: 3, lockMs: 300 });
      const locked = await state.attempt(key, policy);
      expect(locked).toMatchObject({ allowed: false, attempts: 3 });
      expect(locked.allowed === false && locked.retryAfterMs).toBeGreaterThan(0);
      expect(locked.allowed === false && locked.retryAfterMs).toBeLessThanOrEqual(300);
      await sleep(350);
      expect(await state.attempt(key, policy)).toEqual({ allowed: true, attempts: 4, lockMs: 500 }); // 600, capped at 500
      expect(await state.attempt(key, policy)).toMatchObject({ allowed: false });
    });

    it('lets exactly the free attempts through when many arrive at once (counted up front), across handles', async () => {
      const key = `bc-${randomUUID()}`;
      const handles = harness.sharedCounters ? [state, peer] : [state];
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => handles[i % handles.length].attempt(key, policy)));
      expect(outcomes.filter((o) => o.allowed)).toHaveLength(policy.freeAttempts);
    });

    it('clearAttempts forgets them (a success)', async () => {
      const key = `bx-${randomUUID()}`;
      for (let i = 0; i < policy.freeAttempts; i++) await state.attempt(key, policy);
      await state.clearAttempts(key);
      expect(await state.attempt(key, policy)).toEqual({ allowed: true, attempts: 1, lockMs: 0 });
    });

    it('forgets the attempts forgetMs after the last one', async () => {
      const key = `bf-${randomUUID()}`;
      const short: BackoffPolicy = { ...policy, forgetMs: 150 };
      await state.attempt(key, short);
      await state.attempt(key, short);
      await sleep(250);
      expect(await state.attempt(key, short)).toEqual({ allowed: true, attempts: 1, lockMs: 0 });
    });

    it('keeps keys apart', async () => {
      const [a, b] = [`ba-${randomUUID()}`, `bb-${randomUUID()}`];
      for (let i = 0; i < policy.freeAttempts; i++) await state.attempt(a, policy);
      expect((await state.attempt(a, policy)).allowed).toBe(false);
      expect(await state.attempt(b, policy)).toEqual({ allowed: true, attempts: 1, lockMs: 0 });
    });
  });

  describe('begin: one attempt at a time per scope', () => {
    it('starts on an empty scope, then reports the running attempt with its fingerprint and request id', async () => {
      const s = scope();
      const first = claim('fp-a');
      expect(await state.begin(s, first, 10_000)).toEqual({ outcome: 'started' });
      expect(await state.begin(s, claim('fp-a'), 10_000)).toEqual({ outcome: 'running', fingerprint: 'fp-a', requestId: first.requestId });
      expect(await peer.begin(s, claim('fp-b'), 10_000)).toEqual({ outcome: 'running', fingerprint: 'fp-a', requestId: first.requestId });
    });

    it('lets exactly one of many concurrent attempts start, across handles', async () => {
      const s = scope();
      const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? peer : state).begin(s, claim(), 10_000)));
      expect(outcomes.filter((o) => o.outcome === 'started')).toHaveLength(1);
      expect(outcomes.filter((o) => o.outcome === 'running')).toHaveLength(29);
    });

    it('keeps scopes apart', async () => {
      const [a, b] = [scope(), scope()];
      await state.begin(a, claim(), 10_000);
      expect((await state.begin(b, claim(), 10_000)).outcome).toBe('started');
    });
  });

  describe('complete: the kept response', () => {
    it('replaces the owner’s marker; later attempts get status, headers, exact body bytes and the first request id', async () => {
      const s = scope();
      const first = claim('fp-x');
      await state.begin(s, first, 10_000);
      const body = Buffer.concat([Buffer.from('{"bytes":"'), Buffer.from([0, 0xff, 0xfe, 0x80]), Buffer.from('"}')]);
      expect(await state.complete(s, first, response({ body }), 60_000)).toBe(true);
      const later = await peer.begin(s, claim('fp-x'), 10_000);
      expect(later.outcome).toBe('done');
      if (later.outcome !== 'done') return;
      expect(later.fingerprint).toBe('fp-x');
      expect(later.requestId).toBe(first.requestId);
      expect(later.response.status).toBe(201);
      expect(later.response.headers).toEqual(response().headers);
      expect(later.response.body.equals(body)).toBe(true);
    });

    it('keeps a response without body (204)', async () => {
      const s = scope();
      const first = claim();
      await state.begin(s, first, 10_000);
      await state.complete(s, first, { status: 204, headers: {}, body: Buffer.alloc(0) }, 60_000);
      const later = await state.begin(s, claim(), 10_000);
      expect(later.outcome === 'done' && later.response).toEqual({ status: 204, headers: {}, body: Buffer.alloc(0) });
    });

    it('refuses a non-owner while the owner’s marker is live, and leaves it alone', async () => {
      const s = scope();
      const first = claim();
      await state.begin(s, first, 10_000);
      expect(await peer.complete(s, { ...claim(), fingerprint: first.fingerprint }, response(), 60_000)).toBe(false);
      expect((await state.begin(s, claim(), 10_000)).outcome).toBe('running');
    });

    it('forgets the completed record after its retention time', async () => {
      const s = scope();
      const first = claim();
      await state.begin(s, first, 10_000);
      await state.complete(s, first, response(), 200);
      expect((await state.begin(s, claim(), 10_000)).outcome).toBe('done');
      await sleep(260);
      expect((await state.begin(s, claim(), 10_000)).outcome).toBe('started');
    });
  });

  describe('release: an attempt that keeps nothing', () => {
    it('deletes the owner’s marker so the next attempt starts', async () => {
      const s = scope();
      const first = claim();
      await state.begin(s, first, 10_000);
      expect(await peer.release(s, claim().owner)).toBe(false);
      expect((await state.begin(s, claim(), 10_000)).outcome).toBe('running');
      expect(await state.release(s, first.owner)).toBe(true);
      expect((await peer.begin(s, claim(), 10_000)).outcome).toBe('started');
    });

    it('never deletes a completed record', async () => {
      const s = scope();
      const first = claim();
      await state.begin(s, first, 10_000);
      await state.complete(s, first, response(), 60_000);
      expect(await state.release(s, first.owner)).toBe(false);
      expect((await state.begin(s, claim(), 10_000)).outcome).toBe('done');
    });
  });

  describe('leases: a dead attempt does not lock its scope forever', () => {
    it('lets another attempt take over once the lease expires; the old owner can then neither renew nor complete', async () => {
      const s = scope();
      const dead = claim();
      await state.begin(s, dead, 200);
      expect((await peer.begin(s, claim(), 200)).outcome).toBe('running');
      await sleep(260);
      const next = claim();
      expect(await peer.begin(s, next, 10_000)).toEqual({ outcome: 'started' });
      expect(await state.renew(s, dead.owner, 10_000)).toBe(false);
      expect(await state.complete(s, dead, response(), 60_000)).toBe(false);
      expect(await peer.complete(s, next, response({ status: 202 }), 60_000)).toBe(true);
      const later = await state.begin(s, claim(), 10_000);
      expect(later.outcome === 'done' && later.response.status).toBe(202);
    });

    it('renew keeps a live marker alive past its first lease', async () => {
      const s = scope();
      const first = claim();
      await state.begin(s, first, 300);
      await sleep(180);
      expect(await state.renew(s, first.owner, 300)).toBe(true);
      await sleep(180);
      expect(await state.renew(s, first.owner, 300)).toBe(true);
      await sleep(180); // 540 ms after begin, 180 ms after the last renewal
      expect((await peer.begin(s, claim(), 300)).outcome).toBe('running');
      expect(await state.renew(s, claim().owner, 300)).toBe(false);
    });

    it('still keeps the response of an attempt whose lease expired unclaimed', async () => {
      const s = scope();
      const slow = claim();
      await state.begin(s, slow, 150);
      await sleep(200);
      expect(await state.complete(s, slow, response(), 60_000)).toBe(true);
      expect((await peer.begin(s, claim(), 10_000)).outcome).toBe('done');
    });
  });

  describe('durability', () => {
    it('keeps completed records and live markers across a reconnect (a gateway restart)', async () => {
      const [done, running] = [scope(), scope()];
      const first = claim('fp-keep');
      const handle = await harness.open();
      await handle.begin(done, first, 10_000);
      await handle.complete(done, first, response(), 60_000);
      await handle.begin(running, claim(), 10_000);
      await handle.close();
      const reopened = await open();
      const replay = await reopened.begin(done, claim('fp-keep'), 10_000);
      expect(replay.outcome === 'done' && replay.requestId).toBe(first.requestId);
      expect((await reopened.begin(running, claim(), 10_000)).outcome).toBe('running');
    });
  });
}
