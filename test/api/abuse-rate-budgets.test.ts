// Issue #17, "Rate limits by matched route, not by URL text" (docs/edge.md, "Rate limits by route
// class"): a hostile client spells a PDF download or a sign-in the way the limiter did not expect — a
// fragment, a percent-encoded letter, upper case, a trailing slash, HEAD instead of GET (express, not
// the lean lane). Whatever reaches the PDF handler is charged to the PDF budget, exactly once, and
// never to the general budget; whatever reaches the sign-in handler is charged to the client address
// and counted against the e-mail address. Requests are sent with node:http and a literal path, so no
// client normalises the request target on the way.
import http from 'node:http';
import { createUser, createWorkspace, tokenFor, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

const GENERAL = 50;
const PDF = 14;
const ANONYMOUS = 12;
// Long enough that no window rolls over within a test: each test counts one window down.
const WINDOW_MS = 300_000;
const SIGN_IN_FREE = 3;
/** The tests' proxy: requests sent from this loopback address name their client in X-Forwarded-For. */
const PROXY = '127.0.0.2';

let system: System;
let ws: Workspace;

beforeAll(async () => {
  system = await startSystem({
    env: {
      RATE_LIMIT_GENERAL: String(GENERAL),
      RATE_LIMIT_PDF: String(PDF),
      RATE_LIMIT_ANONYMOUS: String(ANONYMOUS),
      RATE_LIMIT_WINDOW_MS: String(WINDOW_MS),
      TRUST_PROXY: PROXY,
      SIGN_IN_FREE_ATTEMPTS: String(SIGN_IN_FREE),
      SIGN_IN_LOCKOUT_MS: '60000',
    },
  });
  ws = await createWorkspace(system);
});
afterAll(() => system?.stop());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  code?: string;
}

/** A fresh client address (TEST-NET-3), so a test starts with a whole anonymous budget. */
let clients = 0;
const freshClient = () => `203.0.113.${++clients}`;

/** `method path` with the path sent byte for byte, from the trusted proxy on behalf of `client`. */
function raw(method: string, path: string, options: { token?: string; client?: string; body?: unknown } = {}): Promise<Answer> {
  const url = new URL(system.baseUrl);
  const headers: Record<string, string> = { 'x-forwarded-for': options.client ?? freshClient() };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, localAddress: PROXY }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const json = res.headers['content-type']?.includes('application/json') && text ? JSON.parse(text) : undefined;
        resolve({ status: res.statusCode!, headers: res.headers, code: json?.error?.code });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const limits = (answer: Answer) => ({ limit: answer.headers['x-ratelimit-limit'], remaining: answer.headers['x-ratelimit-remaining'] });

/** Every spelling of one PDF download (an invoice that does not exist: the PDF handler answers 404). */
const pdfSpellings = (account: number): Array<[method: string, path: string]> => {
  const route = `/api/v1/accounts/${account}/invoices/99999999`;
  const spellings = [
    `${route}/pdf#x`,
    `${route}/%70df`,
    `${route}/%70%64%66?disposition=inline`,
    `${route.toUpperCase()}/PDF`,
    `${route}/pdf/`,
    `${route}/pdf?disposition=inline#frag`,
    `${route}/pdf/#x`,
  ];
  // GET takes the lean lane; HEAD is left to express, which routes it to the same GET route.
  return spellings.flatMap((path): Array<[string, string]> => [
    ['GET', path],
    ['HEAD', path],
  ]);
};

describe('PDF budget: charged by the matched route, whatever the spelling', () => {
  it('every spelling that reaches the PDF handler, through the lean lane or express, counts the PDF budget down by one and the general budget not at all', async () => {
    const token = await tokenFor(system, 'pat', ws.ownerEmail, 'all');
    const before = await raw('GET', '/api/v1/user', { token });
    expect(before.status).toBe(200);
    expect(limits(before)).toEqual({ limit: String(GENERAL), remaining: String(GENERAL - 1) });

    const spellings = pdfSpellings(ws.id);
    expect(spellings).toHaveLength(PDF);
    for (const [i, [method, path]] of spellings.entries()) {
      const res = await raw(method, path, { token });
      // The PDF handler answered (an unknown invoice), not the router's 404: the route was matched.
      expect({ method, path, status: res.status, code: res.code }).toEqual({ method, path, status: 404, code: method === 'GET' ? 'resource_not_found' : undefined });
      expect({ method, path, ...limits(res) }).toEqual({ method, path, limit: String(PDF), remaining: String(PDF - 1 - i) });
    }

    const after = await raw('GET', '/api/v1/user', { token });
    expect(limits(after)).toEqual({ limit: String(GENERAL), remaining: String(GENERAL - 2) });
  });

  it('once the PDF budget is spent, every spelling is refused with 429 from the PDF budget, and the general budget is untouched', async () => {
    const token = await tokenFor(system, 'pat', ws.ownerEmail, 'all');
    const plain = `/api/v1/accounts/${ws.id}/invoices/99999999/pdf`;
    for (let i = 0; i < PDF; i++) expect((await raw(i % 2 ? 'HEAD' : 'GET', plain, { token })).status).toBe(404);
    const spent = await raw('GET', plain, { token });
    expect(spent.status).toBe(429);
    const general = await raw('GET', '/api/v1/user', { token });
    expect(limits(general)).toEqual({ limit: String(GENERAL), remaining: String(GENERAL - 1) });

    for (const [method, path] of pdfSpellings(ws.id)) {
      const res = await raw(method, path, { token });
      expect({ method, path, status: res.status, code: res.code }).toEqual({ method, path, status: 429, code: method === 'GET' ? 'rate_limited' : undefined });
      expect({ method, path, ...limits(res) }).toEqual({ method, path, limit: String(PDF), remaining: '0' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['retry-after']).toBe(res.headers['x-ratelimit-reset']);
    }
    // 40 tries of the escape in the issue: none of them was charged to (or served by) the general budget.
    for (let i = 0; i < 40; i++) expect((await raw('GET', `${plain}#x`, { token })).status).toBe(429);
    const untouched = await raw('GET', '/api/v1/user', { token });
    expect(limits(untouched)).toEqual({ limit: String(GENERAL), remaining: String(GENERAL - 2) });
  });

  it('a target that matches no route (a double slash) is a 404 of the router, charged once to the general budget', async () => {
    const token = await tokenFor(system, 'pat', ws.ownerEmail, 'all');
    await raw('GET', '/api/v1/user', { token }); // verified: charged to itself from here on
    const res = await raw('GET', `/api/v1/accounts/${ws.id}//invoices/99999999/pdf`, { token });
    expect(res.status).toBe(404);
    expect(res.code).toBe('route_not_found');
    expect(limits(res)).toEqual({ limit: String(GENERAL), remaining: String(GENERAL - 2) });
  });
});

describe('sign-in budget: charged by the matched route, whatever the spelling', () => {
  const spellings = ['/api/v1/auth/sign_in#x', '/api/v1/AUTH/SIGN_IN/', '/api/v1/auth/%73ign_in', '/api/v1/auth/sign_in?x=1#y'];

  it("every spelling reaches sign-in and is charged to the client address, even with a valid credential (not to the credential's general budget)", async () => {
    const token = await tokenFor(system, 'pat', ws.ownerEmail, 'all');
    const client = freshClient();
    expect(limits(await raw('GET', '/api/v1/user', { token, client }))).toEqual({ limit: String(GENERAL), remaining: String(GENERAL - 1) });
    const { email } = await createUser(system);
    for (const [i, path] of spellings.entries()) {
      const res = await raw('POST', path, { token, client, body: { email, password: 'correct-horse' } });
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect({ path, ...limits(res) }).toEqual({ path, limit: String(ANONYMOUS), remaining: String(ANONYMOUS - 1 - i) });
    }
    expect(limits(await raw('GET', '/api/v1/user', { token, client }))).toEqual({ limit: String(GENERAL), remaining: String(GENERAL - 2) });
  });

  it('failed attempts in any spelling count against the e-mail address: the lockout holds for every spelling', async () => {
    const { email } = await createUser(system);
    for (let i = 0; i < SIGN_IN_FREE; i++) {
      const res = await raw('POST', spellings[i], { body: { email, password: 'wrong-password' } });
      expect({ path: spellings[i], status: res.status, code: res.code }).toEqual({ path: spellings[i], status: 401, code: 'invalid_credentials' });
    }
    for (const path of [...spellings, '/api/v1/auth/sign_in']) {
      const res = await raw('POST', path, { body: { email, password: 'correct-horse' } });
      expect({ path, status: res.status, code: res.code }).toEqual({ path, status: 429, code: 'rate_limited' });
      expect(res.headers['x-ratelimit-limit']).toBe(String(SIGN_IN_FREE));
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('once the address has spent its budget, every spelling of sign-in is refused for it (429), and another address is not', async () => {
    const client = freshClient();
    const { email } = await createUser(system);
    for (let i = 0; i < ANONYMOUS; i++) expect((await raw('GET', '/api/v1/user', { client })).status).toBe(401);
    for (const path of spellings) {
      const res = await raw('POST', path, { client, body: { email, password: 'correct-horse' } });
      expect({ path, status: res.status, ...limits(res) }).toEqual({ path, status: 429, limit: String(ANONYMOUS), remaining: '0' });
    }
    expect((await raw('POST', spellings[0], { body: { email, password: 'correct-horse' } })).status).toBe(200);
  });
});
