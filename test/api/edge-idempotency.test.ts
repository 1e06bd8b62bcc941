// Spec §4 "Idempotency" (every row of the table) and §8's real general limit (300/min), through the
// test-only echo route (EDGE_TEST_HOOKS=1) and real routes. Embedded mode: one gateway, SQLite edge
// state. Distributed mode: two gateway processes sharing Redis — requests alternate between them.
import { Api } from '../support/api';
import { createWorkspace, tokenFor, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';
import { echo, executions, held, latch, newKey, release, waitingOn } from './edge-support';

// Long enough that the distributed crash test sees the dead attempt's marker before it expires (it
// expires between 2/3 of a lease and a lease after its last renewal), short enough to wait out.
const LEASE_MS = 6000;
let system: System;
let ws: Workspace;
let urls: string[];
/** Gateway i (mod the number of gateways): in distributed mode consecutive calls hit different processes. */
const gw = (i: number) => urls[i % urls.length];

beforeAll(async () => {
  system = await startSystem({ gateways: 2, env: { EDGE_TEST_HOOKS: '1', IDEMPOTENCY_LEASE_MS: String(LEASE_MS) } });
  urls = system.baseUrls;
  ws = await createWorkspace(system);
});
afterAll(() => system?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('replay: the first response, unchanged', () => {
  it('replays status, body, Location, Content-Type and ETag, adding Idempotent-Replayed and X-Original-Request-Id', async () => {
    const key = newKey();
    const first = await echo(gw(0), { token: ws.pat, key, body: { amount: '10.00' } });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (const i of [1, 2]) {
      const again = await echo(gw(i), { token: ws.pat, key, body: { amount: '10.00' } });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      for (const name of ['location', 'content-type', 'etag']) expect(again.headers.get(name)).toBe(first.headers.get(name));
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('x-original-request-id')).toBe(first.headers.get('x-request-id'));
      expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    }
  });

  it('executes every request without a key, and every new key once', async () => {
    const a = await echo(gw(0), { token: ws.pat, body: { n: 1 } });
    const b = await echo(gw(1), { token: ws.pat, body: { n: 1 } });
    const c = await echo(gw(0), { token: ws.pat, key: newKey(), body: { n: 1 } });
    expect(new Set([a, b, c].map((r) => r.body.execution_id)).size).toBe(3);
  });

  it('keeps keys of different credentials apart', async () => {
    const other = await createWorkspace(system, 'Other s.r.o.');
    const key = newKey();
    const mine = await echo(gw(0), { token: ws.pat, key, body: {} });
    const theirs = await echo(gw(1), { token: other.pat, key, body: {} });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.execution_id).not.toBe(mine.body.execution_id);
  });

  it('keeps and replays an error the handler answered (4xx)', async () => {
    const key = newKey();
    const first = await echo(gw(0), { token: ws.pat, key, status: 422 });
    expect(first.status).toBe(422);
    const again = await echo(gw(1), { token: ws.pat, key });
    expect(again.status).toBe(422);
    expect(again.body).toEqual(first.body); // the first request id included
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('same key, different request → 409 idempotency_key_conflict', () => {
  it('for another body, another path, and also while the first still runs', async () => {
    const key = newKey();
    await echo(gw(0), { token: ws.pat, key, body: { amount: '10.00' } });
    const otherBody = await echo(gw(1), { token: ws.pat, key, body: { amount: '10.01' } });
    expect(otherBody.status).toBe(409);
    expect(otherBody.body.error.code).toBe('idempotency_key_conflict');
    const otherPath = await echo(gw(0), { token: ws.pat, key, body: { amount: '10.00' }, route: 'scoped' });
    expect(otherPath.status).toBe(409);
    expect(otherPath.body.error.code).toBe('idempotency_key_conflict');
    // Byte for byte: the same JSON value written differently is another request.
    const respaced = await echo(gw(1), { token: ws.pat, key, raw: '{ "amount": "10.00" }' });
    expect(respaced.body.error.code).toBe('idempotency_key_conflict');
  });

  it('multipart: the file bytes are part of the request; re-encoding the same form (new boundary) still matches', async () => {
    const form = (bytes: number[]) => {
      const f = new FormData();
      f.append('file', new Blob([Buffer.from(bytes)], { type: 'application/pdf' }), 'receipt.pdf');
      return f;
    };
    const key = newKey();
    const first = await echo(gw(0), { token: ws.pat, key, form: form([0x25, 0x50, 0x44, 0x46, 1, 2, 3]) });
    expect(first.status).toBe(201);
    const same = await echo(gw(1), { token: ws.pat, key, form: form([0x25, 0x50, 0x44, 0x46, 1, 2, 3]) });
    expect(same.headers.get('idempotent-replayed')).toBe('true');
    expect(same.body.execution_id).toBe(first.body.execution_id);
    const otherFile = await echo(gw(0), { token: ws.pat, key, form: form([0x25, 0x50, 0x44, 0x46, 1, 2, 4]) });
    expect(otherFile.status).toBe(409);
    expect(otherFile.body.error.code).toBe('idempotency_key_conflict');
  });
});

describe('same key while the first request still runs → 409 idempotency_in_progress', () => {
  it('answers in_progress (on any gateway) while the first is held, longer than one lease; then replays', async () => {
    const key = newKey();
    const hold = latch();
    const first = echo(gw(0), { token: ws.pat, key, body: { x: 1 }, hold });
    await held(gw(0), hold);
    await sleep(LEASE_MS + 1000); // the running request renews its marker: it does not expire under it
    const during = await echo(gw(1), { token: ws.pat, key, body: { x: 1 } });
    expect(during.status).toBe(409);
    expect(during.body.error.code).toBe('idempotency_in_progress');
    const conflicting = await echo(gw(0), { token: ws.pat, key, body: { x: 2 } });
    expect(conflicting.body.error.code).toBe('idempotency_key_conflict');
    expect(await release(gw(0), hold)).toBe(1);
    const done = await first;
    expect(done.status).toBe(201);
    const after = await echo(gw(1), { token: ws.pat, key, body: { x: 1 } });
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(after.body.execution_id).toBe(done.body.execution_id);
  });

  it('N concurrent identical requests across gateways execute once: one 201, every other answer in_progress, then replays', async () => {
    const key = newKey();
    const hold = latch();
    const before = await executions(urls);
    const N = 12;
    // Every request would hold on the latch once executing; only the one that starts ever gets there,
    // and every other one is answered while it is held.
    let settled = 0;
    const answers = Array.from({ length: N }, (_, i) =>
      echo(gw(i), { token: ws.pat, key, body: { n: N }, hold }).then((r) => {
        settled += 1;
        return r;
      }),
    );
    const deadline = Date.now() + 10_000;
    while (settled < N - 1 || (await Promise.all(urls.map((u) => waitingOn(u, hold)))).reduce((a, b) => a + b, 0) < 1) {
      if (Date.now() > deadline) throw new Error(`only ${settled} answers while one request is held`);
      await sleep(20);
    }
    expect(settled).toBe(N - 1);
    const early = await Promise.all(answers.map((a) => Promise.race([a, sleep(0).then(() => undefined)])));
    expect(early.filter((r) => r === undefined)).toHaveLength(1);
    for (const r of early.filter((r) => r !== undefined)) {
      expect(r!.status).toBe(409);
      expect(r!.body.error.code).toBe('idempotency_in_progress');
    }
    let released = 0;
    for (const url of urls) released += await release(url, hold);
    expect(released).toBe(1);
    const winner = (await Promise.all(answers)).find((r) => r.status === 201)!;
    expect(await executions(urls)).toBe(before + 1);
    const replays = await Promise.all(Array.from({ length: N }, (_, i) => echo(gw(i), { token: ws.pat, key, body: { n: N } })));
    for (const r of replays) {
      expect(r.headers.get('idempotent-replayed')).toBe('true');
      expect(r.body.execution_id).toBe(winner.body.execution_id);
    }
    expect(await executions(urls)).toBe(before + 1);
  });

  it('N concurrent identical requests without a hold: exactly one execution, every other answer a replay or in_progress', async () => {
    const key = newKey();
    const before = await executions(urls);
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => echo(gw(i), { token: ws.pat, key, body: { fast: true } })));
    const executed = answers.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
    expect(executed).toHaveLength(1);
    for (const r of answers) {
      if (r === executed[0]) continue;
      if (r.status === 409) expect(r.body.error.code).toBe('idempotency_in_progress');
      else expect([r.status, r.headers.get('idempotent-replayed'), r.body.execution_id]).toEqual([201, 'true', executed[0].body.execution_id]);
    }
    expect(await executions(urls)).toBe(before + 1);
  });
});

describe('what is not kept', () => {
  it('5xx: a retry executes for real', async () => {
    const key = newKey();
    const failed = await echo(gw(0), { token: ws.pat, key, body: { y: 1 }, status: 503 });
    expect(failed.status).toBe(503);
    const retry = await echo(gw(1), { token: ws.pat, key, body: { y: 1 } });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a retryable 409 (concurrent_modification) is not kept: a retry executes; a final 409 is kept', async () => {
    const key = newKey();
    const retryable = await echo(gw(0), { token: ws.pat, key, body: { z: 1 }, status: 409, headers: { 'x-test-code': 'concurrent_modification' } });
    expect(retryable.status).toBe(409);
    expect(retryable.body.error.code).toBe('concurrent_modification');
    const retry = await echo(gw(1), { token: ws.pat, key, body: { z: 1 } });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();

    const finalKey = newKey();
    await echo(gw(0), { token: ws.pat, key: finalKey, body: { z: 2 }, status: 409, headers: { 'x-test-code': 'some_final_conflict' } });
    const replay = await echo(gw(1), { token: ws.pat, key: finalKey, body: { z: 2 } });
    expect(replay.status).toBe(409);
    expect(replay.body.error.code).toBe('some_final_conflict');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a request refused for its scope (403) keeps nothing: the key stays free', async () => {
    const readOnly = await tokenFor(system, 'pat', ws.ownerEmail, 'read:invoices');
    const key = newKey();
    const refused = await echo(gw(0), { token: readOnly, key, body: {}, route: 'scoped' });
    expect(refused.status).toBe(403);
    const other = await echo(gw(1), { token: readOnly, key, body: { different: true } });
    expect(other.status).toBe(201); // not 409: the refused request claimed nothing
    expect(other.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a request refused for its body (400 malformed_json) keeps nothing', async () => {
    const key = newKey();
    const malformed = await echo(gw(0), { token: ws.pat, key, raw: '{"a":' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('malformed_json');
    const fine = await echo(gw(1), { token: ws.pat, key, body: { a: 1 } });
    expect(fine.status).toBe(201);
    expect(fine.headers.get('idempotent-replayed')).toBeNull();
  });

  it('401 comes first and keeps nothing', async () => {
    const res = await echo(gw(0), { token: undefined, key: '' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('missing_credentials');
  });
});

describe('the key itself', () => {
  it('accepts 1 to 255 printable ASCII characters', async () => {
    expect((await echo(gw(0), { token: ws.pat, key: 'k'.repeat(255), body: {} })).status).toBe(201);
    expect((await echo(gw(1), { token: ws.pat, key: `a b-${newKey()}`, body: {} })).status).toBe(201);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['not ASCII', 'clé-é'],
  ])('refuses a key that is %s with 400 invalid_idempotency_key, before executing', async (_what, key) => {
    const before = await executions(urls);
    const res = await echo(gw(0), { token: ws.pat, key, body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_idempotency_key');
    expect(await executions(urls)).toBe(before);
  });

  it('DELETE ignores the header (even a malformed one)', async () => {
    const api = new Api(gw(0), ws.pat);
    const base = `/api/v1/accounts/${ws.id}/contacts`;
    for (const key of [newKey(), 'k'.repeat(300)]) {
      const created = await api.post(base, { invoice_account: { name: 'Deletable s.r.o.' } });
      expect(created.status).toBe(201);
      const deleted = await api.delete(`${base}/${created.body.id}`, { headers: { 'idempotency-key': key } });
      expect(deleted.status).toBe(204);
      expect(deleted.headers.get('idempotent-replayed')).toBeNull();
      const again = await api.delete(`${base}/${created.body.id}`, { headers: { 'idempotency-key': key } });
      expect(again.status).toBe(404); // executed again, not replayed
    }
  });

  it('GET and PATCH ignore the header (even a malformed one)', async () => {
    const api = new Api(gw(0), ws.pat);
    for (const key of [newKey(), 'k'.repeat(300)]) {
      for (let i = 0; i < 2; i++) {
        const get = await api.get('/api/v1/user', { headers: { 'idempotency-key': key } });
        expect(get.status).toBe(200);
        expect(get.headers.get('idempotent-replayed')).toBeNull();
        const patch = await api.patch(`/api/v1/user/accounts/${ws.id}/set_default`, undefined, { headers: { 'idempotency-key': key } });
        expect(patch.status).toBe(200);
        expect(patch.headers.get('idempotent-replayed')).toBeNull();
      }
    }
  });

  it('sign_in (no credential to keep a key under) validates the key but never replays', async () => {
    const api = new Api(gw(0));
    const key = newKey();
    const body = { email: ws.ownerEmail, password: 'correct-horse' };
    const a = await api.post('/api/v1/auth/sign_in', body, { token: null, headers: { 'idempotency-key': key } });
    const b = await api.post('/api/v1/auth/sign_in', body, { token: null, headers: { 'idempotency-key': key } });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.token).not.toBe(a.body.token);
    const bad = await api.post('/api/v1/auth/sign_in', body, { token: null, headers: { 'idempotency-key': 'k'.repeat(256) } });
    expect(bad.status).toBe(400);
  });
});

describe('the general rate limit at its real value (§8: 300 per minute per credential)', () => {
  it('lets 300 requests through across gateways, counting down, and refuses the 301st with 429', async () => {
    const token = await tokenFor(system, 'pat', ws.ownerEmail, 'read:accounts');
    const remaining: number[] = [];
    for (let batch = 0; batch < 30; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => fetch(`${gw(i)}/api/v1/user`, { headers: { authorization: `Bearer ${token}` } })),
      );
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBe('300');
        remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
        await res.arrayBuffer();
      }
    }
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    const refused = await new Api(gw(1), token).get('/api/v1/user');
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });
});

describe('crashes and restarts', () => {
  it('keeps records across a gateway restart', async () => {
    const key = newKey();
    const first = await echo(gw(0), { token: ws.pat, key, body: { keep: true } });
    await system.restart();
    urls = system.baseUrls;
    const again = await echo(gw(1), { token: ws.pat, key, body: { keep: true } });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.execution_id).toBe(first.body.execution_id);
  });

  it('a gateway that dies mid-request does not lock its key: its marker expires within one lease (embedded: is dropped at restart), then a retry executes', async () => {
    const key = newKey();
    const hold = latch();
    const victim = urls.length - 1; // distributed: the second gateway; embedded: the one process
    const orphan = echo(gw(victim), { token: ws.pat, key, body: { crash: true }, hold }).catch(() => undefined);
    await held(gw(victim), hold);
    await system.killGateway(victim);
    await orphan;
    if (system.mode === 'embedded') {
      // edge.db is locked to one process, so the marker lives in that process's memory and dies with it.
      // The retry executes at once (the services answer a re-executed request with its first result).
      await system.restart();
      urls = system.baseUrls;
      const retry = await echo(gw(0), { token: ws.pat, key, body: { crash: true } });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      return;
    }
    const crashedAt = Date.now();
    const during = await echo(gw(0), { token: ws.pat, key, body: { crash: true } });
    expect(during.status).toBe(409);
    expect(during.body.error.code).toBe('idempotency_in_progress');
    let retry = during;
    while (retry.status === 409 && Date.now() - crashedAt < LEASE_MS * 2) {
      await sleep(200);
      retry = await echo(gw(0), { token: ws.pat, key, body: { crash: true } });
    }
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
  });
});
