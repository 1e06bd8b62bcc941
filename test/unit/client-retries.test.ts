// The client's retry rules (client/README.md), against a scripted server: which answers it retries and
// how long it waits (Retry-After honoured), that every attempt of a POST carries the same
// Idempotency-Key, that what it does not retry surfaces as a typed error, and that it gives up.
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createInvoicingClient, InvoicingApiError, InvoicingConnectionError } from '../../client';
import { backoffMs, DEFAULT_RETRY, retryAfterMs } from '../../client/retry';

interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Never answer (the client's timeout must fire). */
  hang?: boolean;
  /** Close the connection without an answer (a reset: a network error). */
  drop?: boolean;
}

const seen: Array<{ method: string; url: string; key: string | undefined; at: number }> = [];
let script: Scripted[] = [];
let server: http.Server;
let baseUrl: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, key: req.headers['idempotency-key'] as string | undefined, at: Date.now() });
    req.resume();
    const next = script.shift() ?? { status: 500, body: { error: { code: 'unscripted', message: 'no answer scripted', request_id: 'req_x' } } };
    if (next.hang) return;
    if (next.drop) return void req.socket.destroy();
    res.writeHead(next.status, { 'content-type': 'application/json', 'x-request-id': 'req_scripted0001', ...next.headers });
    res.end(next.body === undefined ? '' : JSON.stringify(next.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  seen.length = 0;
});

const error = (code: string) => ({ error: { code, message: code.replace(/_/g, ' '), request_id: 'req_scripted0001' } });
const contact = { id: 7, name: 'Globex' };
const client = (options: Partial<Parameters<typeof createInvoicingClient>[0]> = {}) =>
  createInvoicingClient({ baseUrl, token: 'inv_pat_test', retry: { initialDelayMs: 10, maxDelayMs: 40 }, ...options });
const createContact = (c = client()) => c.POST('/accounts/{account_id}/contacts', { params: { path: { account_id: 1 } }, body: { name: 'Globex', invoice_account_id: 3 } });

describe('client: retries', () => {
  it('retries a 429 after Retry-After seconds, with the same Idempotency-Key', async () => {
    script = [{ status: 429, headers: { 'retry-after': '1' }, body: error('rate_limited') }, { status: 201, body: contact }];
    const { data } = await createContact();
    expect(data).toEqual(contact);
    expect(seen).toHaveLength(2);
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(950);
    expect(seen[0].key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1].key).toBe(seen[0].key);
  });

  it('retries a 503 after its Retry-After seconds', async () => {
    script = [{ status: 503, headers: { 'retry-after': '1' }, body: error('renderer_overloaded') }, { status: 201, body: contact }];
    await createContact();
    expect(seen).toHaveLength(2);
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(950);
  });

  it('retries a dropped connection (no answer) with the same Idempotency-Key', async () => {
    script = [{ status: 0, drop: true }, { status: 201, body: contact }];
    const { data } = await createContact();
    expect(data).toEqual(contact);
    expect(seen).toHaveLength(2);
    expect(seen[1].key).toBe(seen[0].key);
  });

  it.each([
    ['503', { status: 503, body: error('service_unavailable') }],
    ['504 gateway_timeout', { status: 504, body: error('gateway_timeout') }],
    ['409 idempotency_in_progress', { status: 409, body: error('idempotency_in_progress') }],
    ['409 concurrent_modification', { status: 409, body: error('concurrent_modification') }],
  ])('retries a %s and answers the retry', async (_name, first) => {
    script = [first, { status: 201, body: contact }];
    const { data } = await createContact();
    expect(data).toEqual(contact);
    expect(seen.map((s) => s.key)).toEqual([seen[0].key, seen[0].key]);
  });

  it('does not retry a 409 idempotency_key_conflict: a typed error with code, request id and status', async () => {
    script = [{ status: 409, body: error('idempotency_key_conflict') }];
    const failure = await createContact().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(InvoicingApiError);
    expect(failure).toMatchObject({ status: 409, code: 'idempotency_key_conflict', requestId: 'req_scripted0001', field: null });
    expect(seen).toHaveLength(1);
  });

  it('gives up after maxRetries and returns the last answer as an error', async () => {
    script = [0, 1, 2].map(() => ({ status: 503, body: error('service_unavailable') }));
    const failure = await createContact(client({ maxRetries: 2 })).catch((err: unknown) => err);
    expect(failure).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(seen).toHaveLength(3);
  });

  it('does not wait for a Retry-After beyond its limit', async () => {
    script = [{ status: 429, headers: { 'retry-after': '3600' }, body: error('rate_limited') }];
    await expect(createContact()).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(seen).toHaveLength(1);
  });

  it('retries an attempt that times out, then reports the connection error with the key to retry under', async () => {
    script = [{ status: 0, hang: true }, { status: 0, hang: true }];
    const failure = await createContact(client({ timeoutMs: 200, maxRetries: 1 })).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(InvoicingConnectionError);
    expect((failure as InvoicingConnectionError).idempotencyKey).toBe(seen[0].key);
    expect(seen).toHaveLength(2);
    expect(seen[1].key).toBe(seen[0].key);
  });

  it('keeps an Idempotency-Key the caller chose', async () => {
    script = [{ status: 201, body: contact }];
    await client().POST('/accounts/{account_id}/contacts', {
      params: { path: { account_id: 1 }, header: { 'Idempotency-Key': 'order-4711' } },
      body: { invoice_account_id: 3 },
    });
    expect(seen[0].key).toBe('order-4711');
  });

  it('sends no Idempotency-Key with GET, and a new one with every POST call', async () => {
    script = [{ status: 200, body: contact }, { status: 201, body: contact }, { status: 201, body: contact }];
    await client().GET('/accounts/{account_id}/contacts/{id}', { params: { path: { account_id: 1, id: 7 } } });
    await createContact();
    await createContact();
    expect(seen[0].key).toBeUndefined();
    expect(seen[1].key).not.toBe(seen[2].key);
  });
});

describe('client: backoff', () => {
  it('doubles per attempt up to the cap, jittered within the upper half of each step', () => {
    const policy = { ...DEFAULT_RETRY, initialDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4].map((attempt) => backoffMs(attempt, policy, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([0, 1, 2, 3, 4].map((attempt) => backoffMs(attempt, policy, () => 1))).toEqual([100, 200, 400, 800, 1000]);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const at = (value: string) => retryAfterMs(new Response(null, { headers: { 'retry-after': value } }), Date.parse('2026-01-01T00:00:00Z'));
    expect(at('2')).toBe(2000);
    expect(at('Thu, 01 Jan 2026 00:00:05 GMT')).toBe(5000);
    expect(at('soon')).toBeNull();
  });
});
