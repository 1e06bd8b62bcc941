// Spec §7/§8 request limits with small configured limits (the real 300/min is exercised in
// edge-idempotency.test.ts): per-credential fixed windows, the separate PDF budget, the headers on
// every response, the 429 body, anonymous requests per client IP, and atomicity across two gateway
// processes sharing Redis (distributed mode).
import { Api } from '../support/api';
import { createWorkspace, tokenFor, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';
import { echo, newKey } from './edge-support';

const GENERAL = 5;
const PDF = 2;
const ANONYMOUS = 4;
const WINDOW_S = 4;
let system: System;
let ws: Workspace;
let urls: string[];
const gw = (i: number) => urls[i % urls.length];

beforeAll(async () => {
  system = await startSystem({
    gateways: 2,
    env: {
      EDGE_TEST_HOOKS: '1',
      RATE_LIMIT_GENERAL: String(GENERAL),
      RATE_LIMIT_PDF: String(PDF),
      RATE_LIMIT_ANONYMOUS: String(ANONYMOUS),
      RATE_LIMIT_WINDOW_MS: String(WINDOW_S * 1000),
    },
  });
  urls = system.baseUrls;
  ws = await createWorkspace(system);
});
afterAll(() => system?.stop());

const freshToken = () => tokenFor(system, 'pat', ws.ownerEmail, 'all');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const limits = (headers: Headers) => ({
  limit: headers.get('x-ratelimit-limit'),
  remaining: headers.get('x-ratelimit-remaining'),
  reset: headers.get('x-ratelimit-reset'),
});
const integer = /^\d+$/;

/** Waits out the window of the last answer (its X-RateLimit-Reset) plus a margin. */
const windowEnd = (headers: Headers) => sleep(Number(headers.get('x-ratelimit-reset')) * 1000 + 300);

describe('per credential, fixed windows (§8)', () => {
  it('counts down X-RateLimit-Remaining across gateways, then answers 429 with Retry-After and the JSON error body', async () => {
    const token = await freshToken();
    const api = (i: number) => new Api(gw(i), token);
    for (let i = 0; i < GENERAL; i++) {
      const res = await api(i).get('/api/v1/user');
      expect(res.status).toBe(200);
      const h = limits(res.headers);
      expect(h.limit).toBe(String(GENERAL));
      expect(h.remaining).toBe(String(GENERAL - 1 - i));
      expect(h.reset).toMatch(integer);
      expect(Number(h.reset)).toBeGreaterThan(0);
      expect(Number(h.reset)).toBeLessThanOrEqual(WINDOW_S);
    }
    const refused = await api(GENERAL).get('/api/v1/user'); // the Api client checks the body against the OpenAPI document
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/json');
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.body.error.request_id).toBe(refused.headers.get('x-request-id'));
    expect(limits(refused.headers)).toEqual({ limit: String(GENERAL), remaining: '0', reset: refused.headers.get('retry-after') });
    expect(refused.headers.get('retry-after')).toMatch(integer);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    await windowEnd(refused.headers);
    const next = await api(1).get('/api/v1/user');
    expect(next.status).toBe(200);
    expect(limits(next.headers).remaining).toBe(String(GENERAL - 1));
  });

  it('keeps credentials apart', async () => {
    const [a, b] = [await freshToken(), await freshToken()];
    for (let i = 0; i <= GENERAL; i++) await new Api(gw(i), a).get('/api/v1/user');
    expect((await new Api(gw(0), a).get('/api/v1/user')).status).toBe(429);
    const other = await new Api(gw(1), b).get('/api/v1/user');
    expect(other.status).toBe(200);
    expect(limits(other.headers).remaining).toBe(String(GENERAL - 1));
  });

  it('is atomic across gateways: of many concurrent requests exactly the limit pass', async () => {
    const token = await freshToken();
    const answers = await Promise.all(
      Array.from({ length: GENERAL * 3 }, (_, i) => fetch(`${gw(i)}/api/v1/user`, { headers: { authorization: `Bearer ${token}` } })),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(GENERAL);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(GENERAL * 2);
    for (const r of answers) await r.arrayBuffer();
  });
});

describe('the headers are on every /api/v1 response', () => {
  it('on 200, 401, 403, 404, 409 and replays alike', async () => {
    const token = await freshToken();
    const readOnly = await tokenFor(system, 'pat', ws.ownerEmail, 'read:invoices');
    const key = newKey();
    const answers = [
      (await new Api(gw(0), token).get('/api/v1/user')).headers,
      (await new Api(gw(0)).get('/api/v1/user', { token: null })).headers,
      (await echo(gw(1), { token: readOnly, route: 'scoped', body: {} })).headers,
      (await new Api(gw(0), token).get('/api/v1/no/such/route')).headers,
      (await echo(gw(1), { token, key, body: { a: 1 } })).headers,
      (await echo(gw(0), { token, key, body: { a: 1 } })).headers, // replay
      (await echo(gw(1), { token, key, body: { a: 2 } })).headers, // 409
    ];
    for (const headers of answers) {
      const h = limits(headers);
      for (const value of Object.values(h)) expect(value).toMatch(integer);
    }
    expect(answers[5].get('idempotent-replayed')).toBe('true');
    expect(limits(answers[5]).remaining).toBe(String(GENERAL - 4)); // a replay is a request like any other
  });
});

describe('the invoice PDF has its own budget (§8: 30/min, counted separately)', () => {
  it('counts GET …/invoices/<id>/pdf apart from the general budget, with its own limit', async () => {
    const token = await freshToken();
    // The same route however it is spelled: with a query string, and in another case (routing ignores case).
    const spellings = ['pdf?disposition=inline', 'pdf', 'PDF'];
    const pdf = (i: number) => fetch(`${gw(i)}/api/v1/accounts/${ws.id}/invoices/1/${spellings[i % 3]}`, { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < PDF; i++) {
      const res = await pdf(i);
      expect(limits(res.headers)).toMatchObject({ limit: String(PDF), remaining: String(PDF - 1 - i) });
      await res.arrayBuffer();
    }
    const refused = await pdf(PDF);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(integer);
    expect(((await refused.json()) as any).error.code).toBe('rate_limited');
    const general = await new Api(gw(0), token).get('/api/v1/user');
    expect(general.status).toBe(200);
    expect(limits(general.headers)).toMatchObject({ limit: String(GENERAL), remaining: String(GENERAL - 1) });
  });
});

describe('requests without a credential are counted per client IP', () => {
  it('refuses the IP after its anonymous budget, while credentials keep their own', async () => {
    const token = await freshToken();
    // Other tests of this file sent anonymous requests too: start from a fresh window of this IP.
    await windowEnd((await new Api(gw(0)).get('/api/v1/user', { token: null })).headers);
    let last: Headers | undefined;
    const statuses: number[] = [];
    for (let i = 0; i <= ANONYMOUS; i++) {
      const res = await new Api(gw(i)).get('/api/v1/user', { token: null });
      statuses.push(res.status);
      last = res.headers;
    }
    expect(statuses.slice(0, ANONYMOUS).every((s) => s === 401)).toBe(true);
    expect(statuses[ANONYMOUS]).toBe(429);
    expect(limits(last!).limit).toBe(String(ANONYMOUS));
    const signIn = await new Api(gw(0)).post('/api/v1/auth/sign_in', { email: ws.ownerEmail, password: 'correct-horse' }, { token: null });
    expect(signIn.status).toBe(429);
    expect((await new Api(gw(1), token).get('/api/v1/user')).status).toBe(200);
    await windowEnd(last!);
  });
});

describe('a request refused with 429 keeps nothing under its Idempotency-Key', () => {
  it('the same key executes once the window has passed', async () => {
    const token = await freshToken();
    let last: Headers | undefined;
    for (let i = 0; i < GENERAL; i++) last = (await new Api(gw(i), token).get('/api/v1/user')).headers;
    const key = newKey();
    const refused = await echo(gw(0), { token, key, body: { late: true } });
    expect(refused.status).toBe(429);
    await windowEnd(refused.headers ?? last!);
    const executed = await echo(gw(1), { token, key, body: { late: true } });
    expect(executed.status).toBe(201);
    expect(executed.headers.get('idempotent-replayed')).toBeNull();
  });
});
