// Cluster mode under engine faults (docs/cluster.md): the cluster topology (two gateways behind the
// round-robin proxy, two replicas of documents) on a Kafka and a FerretDB of this suite's own
// (scripts/engines.sh start-one), so stopping them never touches the run's shared engines; Redis, MinIO
// and Mailpit are the run's. Each fault starts when the engine's stop has returned and ends when its
// start has returned (engines.sh waits for readiness); everything after is polled with a deadline.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Event } from '../../gen/invoicing/events/v1/events';
import { TOPICS } from '../../services/shared/bus/port';
import { ApiResponse, eventually } from '../support/api';
import { createPurchaser, docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { EngineName, enginePort, startEngine, stopEngine } from '../support/engines';
import { brokerCoordinatesGroups, listenToTopic } from '../support/events';
import { mailpitMessagesTo } from '../support/mail';
import { isolatedMongoUrl } from '../support/real-engines';
import { clusterDefaults, startSystem, System } from '../support/system';

/** The callers' gRPC deadline (services/shared/grpc/typed.ts): no request may outlast it by much. */
const GATEWAY_TIMEOUT_MS = 10_000;
const OWN_ENGINES: EngineName[] = ['kafka', 'ferretdb'];

let enginesDir = '';
let broker = '';
let system: System;
let ws: DocsWorkspace;

beforeAll(async () => {
  enginesDir = mkdtempSync(path.join(os.tmpdir(), 'cluster-engine-faults-'));
  await Promise.all(OWN_ENGINES.map((engine) => startEngine(engine, enginesDir)));
  broker = `127.0.0.1:${enginePort(enginesDir, 'kafka')}`;
  await brokerCoordinatesGroups(broker);
  system = await startSystem(
    clusterDefaults({
      env: {
        KAFKA_BROKERS: broker,
        MONGO_URL: isolatedMongoUrl(`mongodb://127.0.0.1:${enginePort(enginesDir, 'ferretdb')}/invoicing`, `inv_faults_${randomBytes(6).toString('hex')}`),
        RATE_LIMIT_GENERAL: '100000',
        MAIL_POLL_MS: '200',
      },
    }),
  );
  ws = await docsWorkspace(system); // identity publishes on Kafka too: set up while every engine is up
}, 300_000);

afterAll(async () => {
  await system?.stop();
  if (enginesDir) {
    for (const engine of OWN_ENGINES) await stopEngine(engine, enginesDir).catch(() => undefined);
    rmSync(enginesDir, { recursive: true, force: true });
  }
}, 300_000);

describe('the Kafka broker stopped about 20 s during changes', () => {
  it('every event is delivered once the broker is back, each document’s in order; each send is applied exactly once (one e-mail)', async () => {
    const OUTAGE_MS = 20_000;
    const invoices: Array<{ id: number; to: string }> = [];
    for (let i = 0; i < 3; i++) {
      const to = `kafka-outage-${i}-${randomBytes(4).toString('hex')}@customer.example`;
      const purchaser = await createPurchaser(ws.api, ws.base, `Kafka outage ${i}`, to);
      const created = await ws.api.post(`${ws.base}/invoices`, { purchaser_id: purchaser, line_items: [line()] });
      expect(created.status).toBe(201);
      invoices.push({ id: created.body.id, to });
    }

    await stopEngine('kafka', enginesDir);
    const stoppedAt = Date.now();
    try {
      // The changes are committed with their events in the outboxes; nothing waits for the broker.
      for (const inv of invoices) {
        expect((await ws.api.patch(`${ws.base}/invoices/${inv.id}`, { note: 'changed while the broker is down' })).status).toBe(200);
        expect((await ws.api.post(`${ws.base}/invoices/${inv.id}/issue`)).status).toBe(200);
        const sent = await ws.api.post(`${ws.base}/invoices/${inv.id}/send`);
        expect(sent.status).toBe(200);
        expect(sent.body.email_status).toBe('queued');
      }
      // The changes happened during the outage by construction (the broker restarts after them); it stays
      // down for at least 20 s however long they took on a loaded machine.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt))));
    } finally {
      await startEngine('kafka', enginesDir);
    }

    const documents = await listenToTopic(broker, TOPICS.documents, (e: Event) => e.account_id === ws.id);
    try {
      const requested = ['documents.invoice.created', 'documents.invoice.updated', 'documents.invoice.issued', 'documents.invoice.send_requested'];
      // Then the delivery's outcome, applied to the invoice with its own event (issue #19's email.delivered).
      const expected = [...requested, 'documents.invoice.email_delivered'];
      const documentOf = (e: Event) => e.document_changed?.document_id ?? e.invoice_send_requested?.document_id ?? 0;
      const ours = () => documents.events.filter((e) => invoices.some((inv) => inv.id === documentOf(e)));
      await eventually(async () => expect(new Set(ours().map((e) => e.id)).size).toBeGreaterThanOrEqual(invoices.length * requested.length), 180_000);
      // A marker sent after the outage, on the same partition (messages are keyed by account): once the mail
      // service has applied it, it has consumed every copy of the earlier sends published before it.
      const markerTo = `kafka-outage-marker-${randomBytes(4).toString('hex')}@customer.example`;
      const marker = await ws.api.post(`${ws.base}/invoices`, { purchaser_id: await createPurchaser(ws.api, ws.base, 'Marker', markerTo), line_items: [line()] });
      expect((await ws.api.post(`${ws.base}/invoices/${marker.body.id}/issue`)).status).toBe(200);
      expect((await ws.api.post(`${ws.base}/invoices/${marker.body.id}/send`)).status).toBe(200);
      // Applied once, however often delivered: the send of each invoice, consumed by the mail service,
      // became exactly one e-mail, and the delivery's outcome came back to the invoice (an event the other way).
      // (Bounds are generous: after the broker returns, consumer groups rejoin and the mail worker renders
      // each PDF — minutes on a 2-core machine running the whole test run in parallel.)
      await eventually(async () => expect(await mailpitMessagesTo(markerTo)).toHaveLength(1), 240_000);
      for (const inv of invoices) expect(await mailpitMessagesTo(inv.to)).toHaveLength(1);
      for (const inv of [...invoices, { id: marker.body.id as number, to: markerTo }]) {
        await eventually(async () => expect((await ws.api.get(`${ws.base}/invoices/${inv.id}`)).body.email_status).toBe('sent'), 180_000);
      }
      await eventually(async () => expect(new Set(ours().map((e) => e.id)).size).toBe(invoices.length * expected.length), 60_000);
      // Delivered, in order: publishing is at-least-once (docs/architecture.md) — both documents replicas
      // relay the backlog, so an event may be on the topic twice; its first delivery is in the order written.
      for (const inv of invoices) {
        const seen = new Set<string>();
        const firsts = ours().filter((e) => documentOf(e) === inv.id && !seen.has(e.id) && seen.add(e.id));
        expect(firsts.map((e) => e.type)).toEqual(expected);
        expect(firsts.map((e) => e.sequence)).toEqual(expected.map((_, i) => i + 1));
      }
      const duplicates = ours().length - invoices.length * expected.length;
      process.stderr.write(`[cluster-engine-faults] ${duplicates} duplicate deliveries after the broker outage (consumers de-duplicate on the event id)\n`);
    } finally {
      await documents.close();
    }
  }, 600_000);
});

describe('the database restarted', () => {
  /** One request and how long its answer took. */
  const timed = async (send: () => Promise<ApiResponse>) => {
    const started = Date.now();
    const res = await send();
    return { res, ms: Date.now() - started };
  };

  it('requests during the outage get 503 with Retry-After, never a 500 or a hang; service resumes by itself, keyed writes retry cleanly', async () => {
    const created = await ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] });
    expect(created.status).toBe(201);
    const key = randomUUID();
    const createKeyed = () => ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line('250')] }, { headers: { 'idempotency-key': key } });
    const countBefore = (await ws.api.get(`${ws.base}/invoices?limit=100`)).body.data.length;

    await stopEngine('ferretdb', enginesDir);
    try {
      // A read, a list and a keyed write, each through the proxy (both gateways), at once.
      const during = await Promise.all([
        timed(() => ws.api.get(`${ws.base}/invoices/${created.body.id}`)),
        timed(() => ws.api.get(`${ws.base}/invoices?limit=10`)),
        timed(createKeyed),
        timed(() => ws.api.get(`${ws.base}/contacts/${ws.purchaser}`)),
      ]);
      for (const { res, ms } of during) {
        expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 503, code: 'service_unavailable' });
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(ms).toBeLessThan(GATEWAY_TIMEOUT_MS + 5_000); // an answer, not a hang
      }
    } finally {
      await startEngine('ferretdb', enginesDir);
    }

    // No manual action: the services reconnect by themselves. A client polls as Retry-After tells it to.
    await eventually(async () => expect((await ws.api.get(`${ws.base}/invoices/${created.body.id}`)).status).toBe(200), 60_000);
    expect((await ws.api.get(`${ws.base}/invoices/${created.body.id}`)).body).toMatchObject({ id: created.body.id, status: 'draft' });
    // The keyed write refused during the outage was not half-done nor remembered as a 503: its retry creates it once.
    const retried = await createKeyed();
    expect(retried.status).toBe(201);
    expect((await createKeyed()).body.id).toBe(retried.body.id);
    expect((await ws.api.get(`${ws.base}/invoices?limit=100`)).body.data.length).toBe(countBefore + 1);
  }, 300_000);
});
