// Cluster mode under faults (docs/cluster.md): two gateways behind the round-robin proxy, two
// replicas of documents (and expenses when it exists), every service its own process, on the real
// engines. Each fault is injected at a point the test observes (an acknowledged answer), not after a
// sleep; each test stops by itself well inside jest's timeout.
import { randomUUID } from 'node:crypto';
import { Api, ApiResponse } from '../support/api';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { tokenFor } from '../support/fixtures';
import { clusterDefaults, startSystem, System } from '../support/system';

// Per credential and window; each test uses a credential of its own.
const RATE_LIMIT = 100;
let system: System;
let ws: DocsWorkspace;

beforeAll(async () => {
  system = await startSystem(clusterDefaults({ metrics: true, env: { RATE_LIMIT_GENERAL: String(RATE_LIMIT), RATE_LIMIT_WINDOW_MS: '600000' } }));
  ws = await docsWorkspace(system);
}, 300_000);
afterAll(() => system?.stop());

/** What a careful client does: retry a failed or unanswered request under the same Idempotency-Key. */
async function withRetries(send: () => Promise<ApiResponse>, attempts = 20): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt++) {
    let res: ApiResponse | undefined;
    try {
      res = await send();
    } catch (err) {
      if (attempt >= attempts) throw err; // the connection itself failed
    }
    if (res && (res.status < 500 || attempt >= attempts)) return res;
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt)); // backoff between a client's retries
  }
}

/** RPCs of `service` (e.g. `invoicing.documents.`) one process has answered: its grpc_server_handled_total. */
async function rpcsServed(label: string, service: string): Promise<number> {
  const text = await (await fetch(system.metricsUrls[label])).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('invoicing_grpc_server_handled_total{') && l.includes(`grpc_service="${service}`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('load spread over the replicas (before any fault)', () => {
  it('requests through the proxy reach both gateways, both documents replicas and both expenses replicas', async () => {
    const N = 20;
    const replicas = ['documents', 'documents 1', 'expenses', 'expenses 1'];
    const serviceOf = (label: string) => `invoicing.${label.split(' ')[0]}.`;
    const before = await Promise.all(replicas.map((r) => rpcsServed(r, serviceOf(r))));
    const forwardedBefore = system.baseUrls.map((url) => system.proxy!.forwarded.get(Number(new URL(url).port)) ?? 0);
    const api = new Api(system.baseUrl, await tokenFor(system, 'pat', ws.ownerEmail, 'all'));
    for (let i = 0; i < N; i++) {
      expect((await api.get(`${ws.base}/invoices`)).status).toBe(200);
      expect((await api.get(`${ws.base}/expenses`)).status).toBe(200);
    }
    const forwarded = system.baseUrls.map((url, i) => (system.proxy!.forwarded.get(Number(new URL(url).port)) ?? 0) - forwardedBefore[i]);
    expect(forwarded).toEqual([N, N]); // the proxy alternates: each gateway got half of the 2N
    const served = (await Promise.all(replicas.map((r) => rpcsServed(r, serviceOf(r))))).map((n, i) => n - before[i]);
    // Each gateway's round_robin channel alternates its replicas: about N/2 each (a request may make more than one RPC).
    for (const n of served) expect(n).toBeGreaterThanOrEqual(N / 4);
  }, 60_000);

  it('the gateways share idempotency and rate-limit state (Redis): a key replays and the budget counts on the other gateway', async () => {
    const token = await tokenFor(system, 'pat', ws.ownerEmail, 'all');
    const [first, second] = system.baseUrls.map((url) => new Api(url, token));
    const key = randomUUID();
    const body = { name: 'Shared edge state', invoice_account: { name: 'Shared edge state s.r.o.' } };
    const created = await first.post(`${ws.base}/contacts`, body, { headers: { 'idempotency-key': key } });
    expect(created.status).toBe(201);
    const replayed = await second.post(`${ws.base}/contacts`, body, { headers: { 'idempotency-key': key } });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.id).toBe(created.body.id);
    // A fresh credential: its budget is counted from zero, alternately by each gateway.
    const fresh = await tokenFor(system, 'pat', ws.ownerEmail, 'all');
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await [first, second][i % 2].get(`${ws.base}/contacts`, { token: fresh });
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).toEqual([RATE_LIMIT - 1, RATE_LIMIT - 2, RATE_LIMIT - 3, RATE_LIMIT - 4]);
  }, 60_000);
});

describe('kill -9 of a documents replica during creates and issues', () => {
  it('loses no acknowledged write, duplicates none and leaves no gap in invoice numbers', async () => {
    const COUNT = 12;
    let acknowledged = 0;
    let killAfterAck: () => void = () => undefined;
    const killPoint = new Promise<void>((resolve) => (killAfterAck = resolve));
    const issueOne = async () => {
      const createKey = randomUUID();
      const created = await withRetries(() =>
        ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] }, { headers: { 'idempotency-key': createKey } }),
      );
      expect(created.status).toBe(201);
      // The fault lands while the other clients are mid-flight: right after the third acknowledged create.
      if (++acknowledged === 3) killAfterAck();
      const issueKey = randomUUID();
      const issued = await withRetries(() => ws.api.post(`${ws.base}/invoices/${created.body.id}/issue`, undefined, { headers: { 'idempotency-key': issueKey } }));
      expect(issued.status).toBe(200);
      return { id: created.body.id as number, number: String(issued.body.number) };
    };
    const killing = killPoint.then(() => system.killService('documents', 0));
    const results: { id: number; number: string }[] = [];
    // Three clients at once, four invoices each.
    await Promise.all(
      [0, 1, 2].map(async () => {
        for (let i = 0; i < COUNT / 3; i++) results.push(await issueOne());
      }),
    );
    await killing;

    const listed = await ws.api.get(`${ws.base}/invoices?limit=100`);
    expect(listed.status).toBe(200);
    const listedIds = listed.body.data.map((d: { id: number }) => d.id).sort((a: number, b: number) => a - b);
    expect(listedIds).toEqual(results.map((r) => r.id).sort((a, b) => a - b)); // none lost, none duplicated
    const sequence = results.map((r) => Number(r.number.slice(4))).sort((a, b) => a - b);
    expect(sequence).toEqual(Array.from({ length: COUNT }, (_, i) => sequence[0] + i)); // contiguous
    expect(sequence[0]).toBe(1);
  }, 300_000);
});

describe('a gateway replica killed', () => {
  it('the other keeps serving through the proxy; a keyed create replays across gateways; the rate limit counts requests of both', async () => {
    const api = new Api(system.baseUrl, await tokenFor(system, 'pat', ws.ownerEmail, 'all'));
    const key = randomUUID();
    const body = { name: 'Across gateways', invoice_account: { name: 'Across gateways s.r.o.' } };
    const first = await api.post(`${ws.base}/contacts`, body, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const before = Number(first.headers.get('x-ratelimit-remaining'));

    await system.killGateway(0);

    // Round-robin alternates gateways: every one of these would hit the dead one half the time.
    const retries = await Promise.all([1, 2, 3, 4].map(() => api.post(`${ws.base}/contacts`, body, { headers: { 'idempotency-key': key } })));
    for (const retry of retries) {
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body.id).toBe(first.body.id);
    }
    const reads = await Promise.all([1, 2, 3, 4].map(() => api.get(`${ws.base}/contacts/${first.body.id}`)));
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    // The budget lives in the shared Redis: what the dead gateway counted still counts. The eight ran
    // concurrently, so the one counted last (the lowest remaining) has seen all of them.
    const after = Math.min(...[...retries, ...reads].map((r) => Number(r.headers.get('x-ratelimit-remaining'))));
    expect(after).toBeLessThanOrEqual(before - 8);
    const burn: number[] = [];
    for (let i = 0; i < RATE_LIMIT; i++) burn.push((await api.get(`${ws.base}/contacts/${first.body.id}`)).status);
    expect(burn).toContain(429);
    expect(burn.filter((s) => s === 200).length).toBeLessThanOrEqual(after);
  }, 300_000);
});
