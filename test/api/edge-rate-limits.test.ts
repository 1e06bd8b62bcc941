// Spec §7/§8 request limits with small configured limits (the real 300/min is exercised in
// edge-idempotency.test.ts): per-credential fixed windows, the separate PDF budget, the headers on
// every response, the 429 body, requests without a valid credential per client address (made-up
// tokens included), sign-ins per e-mail with exponential lockouts, the client address behind a
// trusted proxy, and atomicity across two gateway processes sharing Redis (distributed mode).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { SignJWT } from 'jose';
import { mintToken } from '../../services/shared/credentials';
import { Api } from '../support/api';
import { createUser, createWorkspace, tokenFor, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';
import { echo, newKey } from './edge-support';

const GENERAL = 5;
const PDF = 2;
const ANONYMOUS = 4;
const WINDOW_S = 4;
const SIGN_IN_FREE = 3;
const SIGN_IN_LOCKOUT_MS = 1500;
/** The tests' proxy: requests sent from this loopback address may say whom they forward for. */
const PROXY = '127.0.0.2';
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
      TRUST_PROXY: PROXY,
      SIGN_IN_FREE_ATTEMPTS: String(SIGN_IN_FREE),
      SIGN_IN_LOCKOUT_MS: String(SIGN_IN_LOCKOUT_MS),
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

/** A client address of its own (TEST-NET-3 and documentation IPv6), so a test starts with a fresh budget. */
let clients = 0;
const freshClient = () => (++clients % 2 ? `203.0.113.${clients % 250}` : `2001:db8::${clients.toString(16)}`);

interface Answer {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A request sent through the trusted proxy (from PROXY) on behalf of `forwardedFor` (X-Forwarded-For as given). */
function viaProxy(base: string, method: string, path: string, options: { forwardedFor: string; token?: string; body?: unknown; from?: string }): Promise<Answer> {
  const url = new URL(base + path);
  const headers: Record<string, string> = { 'x-forwarded-for': options.forwardedFor };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method, headers, localAddress: options.from ?? PROXY }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const h = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') h.set(name, value);
        resolve({ status: res.statusCode!, headers: h, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

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
    // Verified on every gateway first (a credential not yet verified is charged to the client address
    // until identity vouches for it), then a fresh window.
    for (let i = 0; i < urls.length; i++) await windowEnd((await new Api(gw(i), token).get('/api/v1/user')).headers);
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
    for (let i = 0; i < urls.length; i++) await new Api(gw(i), token).get('/api/v1/user'); // verified by every gateway
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

describe('a credential is charged only once it is known valid; invalid ones are charged to the client address', () => {
  it('a client rotating made-up well-formed tokens (API keys and JWTs) is limited per address, before any lookup', async () => {
    const client = freshClient();
    const forged = async (i: number) =>
      i % 2
        ? mintToken('pat', randomBytes(32))
        : new SignJWT({ sid: i }).setProtectedHeader({ alg: 'HS256' }).setSubject('1').setIssuer('invoicing').setAudience('invoicing-api')
            .setExpirationTime('1h').sign(randomBytes(32));
    const statuses: number[] = [];
    let last: Answer | undefined;
    for (let i = 0; i <= ANONYMOUS; i++) {
      last = await viaProxy(gw(i), 'GET', '/api/v1/user', { forwardedFor: client, token: await forged(i) });
      statuses.push(last.status);
      if (i < ANONYMOUS) {
        expect(last.body.error.code).toBe('invalid_credentials');
        expect(limits(last.headers)).toMatchObject({ limit: String(ANONYMOUS), remaining: String(ANONYMOUS - 1 - i) });
      }
    }
    expect(statuses).toEqual([...Array(ANONYMOUS).fill(401), 429]);
    expect(last!.body.error.code).toBe('rate_limited');
    expect(last!.headers.get('retry-after')).toMatch(integer);
  });

  it('revoked credentials count against the address too', async () => {
    const client = freshClient();
    const revoked = await freshToken();
    await system.cli('token', 'revoke', '--token', revoked);
    const statuses: number[] = [];
    for (let i = 0; i <= ANONYMOUS; i++) statuses.push((await viaProxy(gw(i), 'GET', '/api/v1/user', { forwardedFor: client, token: revoked })).status);
    expect(statuses).toEqual([...Array(ANONYMOUS).fill(401), 429]);
  });

  it('a valid credential is charged to itself, not to the address, also on its first request', async () => {
    const client = freshClient();
    const token = await freshToken();
    const first = await viaProxy(gw(0), 'GET', '/api/v1/user', { forwardedFor: client, token });
    expect(first.status).toBe(200);
    expect(limits(first.headers)).toMatchObject({ limit: String(GENERAL), remaining: String(GENERAL - 1) });
    // The address's budget is untouched: its first anonymous request has the whole budget left.
    const anonymous = await viaProxy(gw(0), 'GET', '/api/v1/user', { forwardedFor: client });
    expect(anonymous.status).toBe(401);
    expect(limits(anonymous.headers)).toMatchObject({ limit: String(ANONYMOUS), remaining: String(ANONYMOUS - 1) });
  });

  it('an address that spent its budget on made-up tokens keeps no one out whose credential the gateway has verified', async () => {
    const client = freshClient();
    const token = await freshToken();
    for (let i = 0; i < urls.length; i++) expect((await new Api(gw(i), token).get('/api/v1/user')).status).toBe(200);
    for (let i = 0; i <= ANONYMOUS; i++) await viaProxy(gw(i), 'GET', '/api/v1/user', { forwardedFor: client, token: mintToken('live', randomBytes(32)) });
    const valid = await viaProxy(gw(1), 'GET', '/api/v1/user', { forwardedFor: client, token });
    expect(valid.status).toBe(200);
    expect(limits(valid.headers).limit).toBe(String(GENERAL));
  });
});

describe('the client address (TRUST_PROXY)', () => {
  it('behind the trusted proxy, X-Forwarded-For is walked from the right: each client has its own budget, a spoofed left part changes nothing', async () => {
    const [a, b] = [freshClient(), freshClient()];
    for (let i = 0; i < ANONYMOUS; i++) {
      const spoofed = `198.51.100.${i + 1}, ${a}`; // the client wrote the first entry itself
      expect((await viaProxy(gw(i), 'GET', '/api/v1/user', { forwardedFor: spoofed })).status).toBe(401);
    }
    expect((await viaProxy(gw(0), 'GET', '/api/v1/user', { forwardedFor: `198.51.100.99, ${a}` })).status).toBe(429);
    const other = await viaProxy(gw(1), 'GET', '/api/v1/user', { forwardedFor: b });
    expect(other.status).toBe(401);
    expect(limits(other.headers).remaining).toBe(String(ANONYMOUS - 1));
  });

  it('from any other peer X-Forwarded-For is ignored: rotating it does not buy a fresh budget', async () => {
    const peer = '127.0.0.3'; // not in TRUST_PROXY
    const statuses: number[] = [];
    for (let i = 0; i <= ANONYMOUS; i++) statuses.push((await viaProxy(gw(i), 'GET', '/api/v1/user', { forwardedFor: freshClient(), from: peer })).status);
    expect(statuses).toEqual([...Array(ANONYMOUS).fill(401), 429]);
  });
});

describe('POST /auth/sign_in: attempts per e-mail address, with exponential lockouts', () => {
  const signIn = (email: string, password: string, i = 0) =>
    viaProxy(gw(i), 'POST', '/api/v1/auth/sign_in', { forwardedFor: freshClient(), body: { email, password } }); // every attempt from another address

  it(`after ${SIGN_IN_FREE} failed attempts the address is locked (429, Retry-After), whatever client asks, the right password included`, async () => {
    const { email } = await createUser(system);
    for (let i = 0; i < SIGN_IN_FREE; i++) {
      const res = await signIn(email, 'wrong-password', i);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('invalid_credentials');
    }
    const locked = await signIn(`  ${email.toUpperCase()} `, 'correct-horse', 1); // the same address, as identity reads it
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('rate_limited');
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(SIGN_IN_LOCKOUT_MS / 1000));
    expect(limits(locked.headers)).toEqual({ limit: String(SIGN_IN_FREE), remaining: '0', reset: String(retryAfter) });

    // Another address is not affected.
    const other = await createUser(system);
    expect((await signIn(other.email, 'correct-horse')).status).toBe(200);

    // Once the lockout ends, one more failure locks for twice as long.
    await sleep(retryAfter * 1000 + 200);
    expect((await signIn(email, 'wrong-password')).status).toBe(401);
    const longer = await signIn(email, 'correct-horse', 1);
    expect(longer.status).toBe(429);
    expect(Number(longer.headers.get('retry-after'))).toBeGreaterThan(retryAfter);
  });

  it('a successful sign-in forgets the failures', async () => {
    const { email } = await createUser(system);
    for (let i = 0; i < SIGN_IN_FREE - 1; i++) expect((await signIn(email, 'wrong-password', i)).status).toBe(401);
    expect((await signIn(email, 'correct-horse')).status).toBe(200);
    for (let i = 0; i < SIGN_IN_FREE - 1; i++) expect((await signIn(email, 'wrong-password', i)).status).toBe(401);
    expect((await signIn(email, 'correct-horse', 1)).status).toBe(200);
  });

  it('concurrent guesses cannot slip past the lockout: of many at once, only the free attempts reach identity', async () => {
    const { email } = await createUser(system);
    const answers = await Promise.all(Array.from({ length: SIGN_IN_FREE * 3 }, (_, i) => signIn(email, `guess-${i}`, i)));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(SIGN_IN_FREE);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(SIGN_IN_FREE * 2);
  });
});
