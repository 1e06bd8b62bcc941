// Idempotency-Keys reach the services (docs/edge.md "At most once"): the service records the key with
// its own write, so a retry that the edge no longer answers — its record lost in a crash, released
// after a 5xx, or (here, deterministically) expired — still gets the first result: no second
// document, no false 422. The edge keeps records for 1 s in this suite; a retry is known to reach the
// service when its answer carries no Idempotent-Replayed header.
import { randomUUID } from 'node:crypto';
import { ApiResponse } from '../support/api';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { startSystem, System } from '../support/system';

let system: System;
let ws: DocsWorkspace;

beforeAll(async () => {
  system = await startSystem({ env: { IDEMPOTENCY_TTL_MS: '1000' } });
  ws = await docsWorkspace(system);
});
afterAll(() => system?.stop());

/** Sends the same keyed POST until the edge has forgotten it (the answer is no replay); that answer. */
async function retryPastTheEdge(path: string, key: string, body: unknown): Promise<ApiResponse> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await ws.api.post(path, body, { headers: { 'idempotency-key': key } });
    if (res.headers.get('idempotent-replayed') !== 'true' || Date.now() > deadline) return res;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const invoiceBody = (note: string) => ({ purchaser_id: ws.purchaser, note, line_items: [line()] });

describe('POST invoices: a retry the edge no longer answers', () => {
  it('answers the invoice the first attempt created (one invoice); the key with another body is 409 idempotency_key_conflict', async () => {
    const key = randomUUID();
    const note = `once ${key}`;
    const first = await ws.api.post(`${ws.base}/invoices`, invoiceBody(note), { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const retry = await retryPastTheEdge(`${ws.base}/invoices`, key, invoiceBody(note));
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
    const list = await ws.api.get(`${ws.base}/invoices?limit=100`);
    expect(list.body.data.filter((inv: { note: string }) => inv.note === note)).toHaveLength(1);

    const other = await ws.api.post(`${ws.base}/invoices`, invoiceBody('another body'), { headers: { 'idempotency-key': key } });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_key_conflict');
  });
});

describe('POST invoices/{id}/issue: a retry the edge no longer answers', () => {
  it('answers 200 with the issued invoice, not 422 not_draft; another key still gets not_draft', async () => {
    const draft = await ws.api.post(`${ws.base}/invoices`, invoiceBody('to issue'));
    const key = randomUUID();
    const path = `${ws.base}/invoices/${draft.body.id}/issue`;
    const issued = await ws.api.post(path, {}, { headers: { 'idempotency-key': key } });
    expect(issued.status).toBe(200);
    const retry = await retryPastTheEdge(path, key, {});
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ id: draft.body.id, status: issued.body.status, number: issued.body.number });
    const fresh = await ws.api.post(path, {}, { headers: { 'idempotency-key': randomUUID() } });
    expect(fresh.status).toBe(422);
    expect(fresh.body.error.code).toBe('not_draft');
  });
});

describe('POST contacts and bank_accounts: a retry the edge no longer answers', () => {
  it('answers the contact the first attempt created', async () => {
    const key = randomUUID();
    const body = { name: `Retry ${key}`, invoice_account: { name: 'Retry a.s.' } };
    const first = await ws.api.post(`${ws.base}/contacts`, body, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const retry = await retryPastTheEdge(`${ws.base}/contacts`, key, body);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
  });

  it('answers the bank account the first attempt created, not iban_taken', async () => {
    const key = randomUUID();
    const body = { name: 'Retry account', iban: 'DE89370400440532013000' };
    const first = await ws.api.post(`${ws.base}/bank_accounts`, body, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const retry = await retryPastTheEdge(`${ws.base}/bank_accounts`, key, body);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(first.body.id);
  });
});
