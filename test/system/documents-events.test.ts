// Documents events (issue "Events"): every change is published on the bus through an outbox written
// with the change; topics keyed by workspace; stable event ids. Distributed mode: a Kafka broker of this
// suite's own (so stopping it disturbs no other suite), stopped and restarted mid-test; and two
// documents-service processes issuing concurrently. Embedded mode: the in-process relay drains.
// Runs once (jest project `system`), each part in the mode it is about.
import Database from 'better-sqlite3';
import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DocumentsServiceService, DocumentType } from '../../gen/invoicing/documents/v1/documents';
import { Event } from '../../gen/invoicing/events/v1/events';
import { KafkaEventBus } from '../../services/shared/bus/kafka';
import { Subscription, TOPICS } from '../../services/shared/bus/port';
import { fromMessage } from '../../services/shared/events';
import { connect } from '../../services/shared/grpc/typed';
import { eventually } from '../support/api';
import { runEnginesScript, startEngine, stopEngine } from '../support/engines';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { dist, startProcess, startSystem, System } from '../support/system';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';

/**
 * These tests are about numbering across replicas, so every concurrent issue is admitted: before a
 * process has timed an issue it admits ISSUE_ADMIT_INITIAL (10) at once and answers the rest 503
 * issuing_overloaded (admission has its own tests: test/unit/documents-admission.test.ts).
 */
const NUMBERING_NOT_ADMISSION = { ISSUE_ADMIT_INITIAL: '100' };

let system: System;
let kafkaDir = '';
let broker = '';
let mongoUrl = '';

async function startDistributed(): Promise<void> {
  kafkaDir = mkdtempSync(path.join(os.tmpdir(), 'documents-kafka-'));
  await runEnginesScript(['start-one', 'kafka', kafkaDir]);
  const port = /^kafka (\d+)$/m.exec(readFileSync(path.join(kafkaDir, 'ports'), 'utf8'))![1];
  broker = `127.0.0.1:${port}`;
  mongoUrl = isolatedMongoUrl(realEngineEnv().MONGO_URL, `inv_docs_${randomBytes(6).toString('hex')}`);
  system = await startSystem({ mode: 'distributed', env: { KAFKA_BROKERS: broker, MONGO_URL: mongoUrl, OUTBOX_INTERVAL_MS: '250', ...NUMBERING_NOT_ADMISSION } });
}

async function stopDistributed(): Promise<void> {
  await system?.stop();
  if (kafkaDir) {
    await stopEngine('kafka', kafkaDir).catch(() => undefined);
    rmSync(kafkaDir, { recursive: true, force: true });
  }
}

/** Collects the documents events of one workspace from the beginning of the topic, with a fresh group. */
async function listen(accountId: number): Promise<{ events: Event[]; close(): Promise<void> }> {
  const bus = new KafkaEventBus([broker], `documents-events-test-${randomBytes(4).toString('hex')}`);
  const events: Event[] = [];
  const sub: Subscription = await bus.subscribe(TOPICS.documents, { group: `test-${randomBytes(6).toString('hex')}`, fromBeginning: true }, async (m) => {
    const event = fromMessage(m);
    if (event.account_id === accountId) events.push(event);
  });
  return {
    events,
    close: async () => {
      await sub.close();
      await bus.close();
    },
  };
}

const key = (e: Event) => {
  const docId = e.document_changed?.document_id ?? e.invoice_send_requested?.document_id ?? e.document_converted?.source_id;
  return `${e.type}#${docId}`;
};
const unique = (events: Event[]) => [...new Map(events.map((e) => [e.id, e])).values()];

/**
 * The send's outcome lands on the invoice as a change of its own, with its event, once the mail service
 * consumed the send (email_status sent, or failed: this system may have no SMTP relay).
 */
async function mailOutcomeOf(ws: DocsWorkspace, invoiceId: number): Promise<string> {
  const status = await eventually(async () => {
    const now = (await ws.api.get(`${ws.base}/invoices/${invoiceId}`)).body.email_status;
    expect(['sent', 'failed']).toContain(now);
    return now as 'sent' | 'failed';
  }, 90_000);
  return `documents.invoice.${status === 'sent' ? 'email_delivered' : 'email_failed'}#${invoiceId}`;
}

/** Changes of every kind; the events they publish, and the invoice that was sent (its outcome comes later). */
async function changesOf(ws: DocsWorkspace): Promise<{ expected: string[]; sent: number }> {
  const expected: string[] = [];
  let sent = 0;
  const post = (p: string, body?: unknown) => ws.api.post(`${ws.base}/${p}`, body);
  const inv = (await post('invoices', { purchaser_id: ws.purchaser, line_items: [line()] })).body;
  expected.push(`documents.invoice.created#${inv.id}`);
  await ws.api.patch(`${ws.base}/invoices/${inv.id}`, { note: 'changed' });
  expected.push(`documents.invoice.updated#${inv.id}`);
  expect((await post(`invoices/${inv.id}/issue`)).status).toBe(200);
  expected.push(`documents.invoice.issued#${inv.id}`);
  expect((await post(`invoices/${inv.id}/send`, { cc: 'cc@example.com' })).status).toBe(200);
  expected.push(`documents.invoice.send_requested#${inv.id}`);
  expect((await post(`invoices/${inv.id}/mark_paid`)).status).toBe(200);
  expected.push(`documents.invoice.paid#${inv.id}`);
  sent = inv.id;
  const quote = (await post('quotes', { purchaser_id: ws.purchaser, line_items: [line()] })).body;
  await post(`quotes/${quote.id}/accept`);
  expected.push(`documents.quote.created#${quote.id}`, `documents.quote.accepted#${quote.id}`);
  const proforma = (await post('proformas', { purchaser_id: ws.purchaser, line_items: [line()] })).body;
  const final = (await post(`proformas/${proforma.id}/convert_to_invoice`)).body;
  expected.push(
    `documents.proforma.created#${proforma.id}`,
    `documents.invoice.created#${final.id}`,
    `documents.invoice.issued#${final.id}`,
    `documents.proforma.converted#${proforma.id}`,
  );
  const gone = (await post('credit_notes', { purchaser_id: ws.purchaser })).body;
  expect((await ws.api.delete(`${ws.base}/credit_notes/${gone.id}`)).status).toBe(204);
  expected.push(`documents.credit_note.created#${gone.id}`, `documents.credit_note.deleted#${gone.id}`);
  return { expected, sent };
}

describe('distributed mode on real engines', () => {
beforeAll(startDistributed, 180_000);
afterAll(stopDistributed, 60_000);

describe('events on Kafka', () => {
  it('every change is published once, in order, keyed by workspace, with stable unique ids', async () => {
    const ws = await docsWorkspace(system);
    const listener = await listen(ws.id);
    try {
      const changes = await changesOf(ws);
      const expected = [...changes.expected, await mailOutcomeOf(ws, changes.sent)];
      await eventually(async () => expect(unique(listener.events).map(key).sort()).toEqual([...expected].sort()), 30_000);
      const events = unique(listener.events);
      // The workspace's partition delivers them in the order they happened.
      expect(events.map((e) => e.occurred_at)).toEqual([...events.map((e) => e.occurred_at)].sort());
      expect(events.every((e) => e.livemode && /^[0-9a-f-]{36}$/.test(e.id))).toBe(true);
      const send = events.find((e) => e.type === 'documents.invoice.send_requested')!;
      expect(send.invoice_send_requested).toMatchObject({ to: ['ap@customer.example'], cc: ['cc@example.com'], bcc: [], locale: 'cs' });
      expect(send.invoice_send_requested!.subject).toMatch(/^Faktura \d{10}$/);
      const paid = events.find((e) => e.type === 'documents.invoice.paid')!;
      expect(paid.document_changed).toMatchObject({ document_type: 'invoice', status: 'paid', amount_due: '0.00', currency: 'CZK' });
    } finally {
      await listener.close();
    }
  }, 300_000);

  it('with Kafka stopped, changes still commit; after its restart every event arrives exactly once', async () => {
    const ws = await docsWorkspace(system); // identity publishes on Kafka too: set up before the outage
    let changes: { expected: string[]; sent: number } = { expected: [], sent: 0 };
    await stopEngine('kafka', kafkaDir);
    try {
      changes = await changesOf(ws);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    } finally {
      await startEngine('kafka', kafkaDir);
    }
    const listener = await listen(ws.id);
    try {
      const expected = [...changes.expected, await mailOutcomeOf(ws, changes.sent)];
      await eventually(async () => expect(unique(listener.events).map(key).sort()).toEqual([...expected].sort()), 90_000);
      // Exactly once per change: one event id per change, whatever the broker redelivered.
      const ids = new Map<string, Set<string>>();
      for (const e of listener.events) ids.set(key(e), (ids.get(key(e)) ?? new Set()).add(e.id));
      expect([...ids.values()].every((set) => set.size === 1)).toBe(true);
    } finally {
      await listener.close();
    }
  }, 300_000);
});

/** A second documents-service process on the same database: a replica. */
async function startReplica(): Promise<{ child: ChildProcess; address: string }> {
  const env = {
    ...realEngineEnv(),
    MONGO_URL: mongoUrl,
    KAFKA_BROKERS: broker,
    SERVICE: 'documents',
    GRPC_PORT: '0',
    // Any free admin port: the default (50052) may be held by another system of the run.
    ADMIN_GRPC_PORT: '0',
    ...NUMBERING_NOT_ADMISSION,
    IDENTITY_ADDR: system.cliEnv.IDENTITY_ADDR,
    CONTACTS_ADDR: system.cliEnv.CONTACTS_ADDR,
    JWT_SECRET: randomBytes(32).toString('base64url'),
    CURSOR_SECRET: randomBytes(32).toString('base64url'),
    URL_SECRET: randomBytes(32).toString('base64url'),
  };
  const { child, port } = await startProcess(dist('deploy/distributed/main.js'), env, 'documents replica');
  return { child, address: `127.0.0.1:${port}` };
}

describe('two documents-service processes', () => {
  it('issuing concurrently through both yields every number once: no gap, no duplicate', async () => {
    const ws = await docsWorkspace(system);
    const replica = await startReplica();
    const clients = [system.cliEnv.DOCUMENTS_ADDR, replica.address].map((address) =>
      connect(DocumentsServiceService, 'invoicing.documents.v1.DocumentsService', address),
    );
    try {
      const drafts: number[] = [];
      for (let i = 0; i < 24; i++) {
        drafts.push((await ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] })).body.id);
      }
      const tenant = { account_id: ws.id, livemode: true };
      const issued = await Promise.all(
        drafts.map((id, i) => clients[i % 2].issueDocument({ tenant, type: DocumentType.DOCUMENT_TYPE_INVOICE, id }, { timeoutMs: 60_000 })),
      );
      const year = new Date().getUTCFullYear();
      const numbers = issued.map((r) => r.document!.number!).sort();
      expect(numbers).toEqual(Array.from({ length: 24 }, (_, i) => `${year}${String(i + 1).padStart(6, '0')}`));
      const listed = await ws.api.get(`${ws.base}/invoices?limit=100`);
      expect(new Set(listed.body.data.map((d: { number: string }) => d.number)).size).toBe(24);
    } finally {
      clients.forEach((c) => c.close());
      replica.child.kill('SIGTERM');
    }
  }, 300_000);
  it('a process killed (SIGKILL) mid-issue leaves no gap: the survivor settles its reserved numbers', async () => {
    const ws = await docsWorkspace(system);
    const replica = await startReplica();
    const [doomed, survivor] = [replica.address, system.cliEnv.DOCUMENTS_ADDR].map((address) =>
      connect(DocumentsServiceService, 'invoicing.documents.v1.DocumentsService', address),
    );
    const tenant = { account_id: ws.id, livemode: true };
    const issue = (client: typeof doomed, id: number) =>
      client.issueDocument({ tenant, type: DocumentType.DOCUMENT_TYPE_INVOICE, id }, { timeoutMs: 60_000 });
    try {
      const drafts: number[] = [];
      for (let i = 0; i < 16; i++) {
        drafts.push((await ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] })).body.id);
      }
      const calls = drafts.map((id) => issue(doomed, id).then(() => true, () => false));
      await Promise.race(calls); // the replica is now working through the rest of its queue
      replica.child.kill('SIGKILL');
      expect((await Promise.all(calls)).filter((ok) => !ok).length).toBeGreaterThan(0); // it died with work in flight
      // Whatever it left behind (a reserved number, drafts) the survivor completes.
      for (const id of drafts) {
        const doc = await ws.api.get(`${ws.base}/invoices/${id}`);
        if (doc.body.status === 'draft') await issue(survivor, id).catch(() => undefined);
      }
      const listed = await ws.api.get(`${ws.base}/invoices?limit=100`);
      const year = new Date().getUTCFullYear();
      expect(listed.body.data.map((d: { number: string }) => d.number).sort()).toEqual(
        Array.from({ length: 16 }, (_, i) => `${year}${String(i + 1).padStart(6, '0')}`),
      );
    } finally {
      doomed.close();
      survivor.close();
      if (replica.child.exitCode === null) replica.child.kill('SIGKILL');
    }
  }, 300_000);
});

});

describe('events in embedded mode', () => {
  let embedded: System;
  beforeAll(async () => {
    // Its own: it counts the pending outboxes of the whole database.
    embedded = await startSystem({ mode: 'embedded', private: true });
  });
  afterAll(() => embedded?.stop());

  it('the in-process relay publishes every outbox (none left pending)', async () => {
    const ws = await docsWorkspace(embedded);
    await changesOf(ws);
    const db = new Database(path.join(embedded.cliEnv.DATA_DIR, 'invoicing.db'), { readonly: true, fileMustExist: true });
    try {
      await eventually(async () => {
        const row = db.prepare(`SELECT count(*) AS n FROM c_documents WHERE json_extract(doc, '$.outbox_pending') IS NOT NULL`).get() as { n: number };
        expect(row.n).toBe(0);
      }, 10_000);
    } finally {
      db.close();
    }
  });
});
