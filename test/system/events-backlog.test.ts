// Events are published, in order, whatever the backlog (issue #8): with the broker down, 500 changes
// across 20 documents pile up in the outboxes — several MB, well over Kafka's default 1 MiB
// message.max.bytes, which a single producer call used to exceed on every attempt — and a revocation is
// made. After the broker is back, every event arrives exactly once and each document's events in the order
// they were written. Distributed mode, on a Kafka of this suite's own (stopped and restarted mid-test)
// and the run's FerretDB. Bounded: every wait has a deadline; the suite stops its processes and broker.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DocumentsServiceService, DocumentType } from '../../gen/invoicing/documents/v1/documents';
import { Event } from '../../gen/invoicing/events/v1/events';
import { TOPICS } from '../../services/shared/bus/port';
import { connect } from '../../services/shared/grpc/typed';
import { eventually } from '../support/api';
import { enginePort, runEnginesScript, startEngine, stopEngine } from '../support/engines';
import { brokerCoordinatesGroups, listenToTopic } from '../support/events';
import { tokenFor } from '../support/fixtures';
import { isolatedMongoUrl, realEngineEnv } from '../support/real-engines';
import { startSystem, System } from '../support/system';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';

const DOCUMENTS = 20;
const PATCHES = 17; // + created + issued + SENDS = 25 changes a document, 500 in all
const SENDS = 6;
/** ~14 kB of UTF-8 per send_requested event (the API's longest message): 120 of them are ~1.7 MB. */
const LONG_MESSAGE = `Dobrý den, ${'žluťoučký kůň '.repeat(700)}`.slice(0, 10_000);

let system: System;
let kafkaDir = '';
let broker = '';

beforeAll(async () => {
  kafkaDir = mkdtempSync(path.join(os.tmpdir(), 'events-backlog-kafka-'));
  await runEnginesScript(['start-one', 'kafka', kafkaDir]);
  broker = `127.0.0.1:${enginePort(kafkaDir, 'kafka')}`;
  await brokerCoordinatesGroups(broker);
  const mongoUrl = isolatedMongoUrl(realEngineEnv().MONGO_URL, `inv_backlog_${randomBytes(6).toString('hex')}`);
  system = await startSystem({
    mode: 'distributed',
    env: { KAFKA_BROKERS: broker, MONGO_URL: mongoUrl, RATE_LIMIT_GENERAL: '100000' },
  });
}, 300_000);

afterAll(async () => {
  await system?.stop();
  if (kafkaDir) {
    await stopEngine('kafka', kafkaDir).catch(() => undefined);
    rmSync(kafkaDir, { recursive: true, force: true });
  }
}, 300_000);

/** Every event of a topic from its beginning, for one workspace, as delivered (duplicates kept). */
const listen = (topic: string, accept: (e: Event) => boolean) => listenToTopic(broker, topic, accept);

/**
 * Issues one at a time, over gRPC with a generous deadline: numbering serialises issues anyway, and on a
 * loaded machine an issue can outlast the gateway's 10 s deadline — timing is not what this suite is about.
 */
let issuing: Promise<unknown> = Promise.resolve();
function issueInTurn(ws: DocsWorkspace, id: number): Promise<unknown> {
  const turn = issuing.then(async () => {
    const client = connect(DocumentsServiceService, 'invoicing.documents.v1.DocumentsService', system.cliEnv.DOCUMENTS_ADDR);
    try {
      return await client.issueDocument({ tenant: { account_id: ws.id, livemode: true }, type: DocumentType.DOCUMENT_TYPE_INVOICE, id }, { timeoutMs: 120_000 });
    } finally {
      client.close();
    }
  });
  issuing = turn.catch(() => undefined);
  return turn;
}

/** 25 changes of one invoice, in order: what its events must say, in this order. */
async function changeOneDocument(ws: DocsWorkspace): Promise<{ id: number; expected: string[] }> {
  const created = await ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] });
  expect(created.status).toBe(201);
  const id = created.body.id as number;
  const expected = ['documents.invoice.created'];
  for (let n = 1; n <= PATCHES; n++) {
    expect((await ws.api.patch(`${ws.base}/invoices/${id}`, { note: `revision ${n}` })).status).toBe(200);
    expected.push('documents.invoice.updated');
  }
  await issueInTurn(ws, id);
  expected.push('documents.invoice.issued');
  for (let n = 1; n <= SENDS; n++) {
    expect((await ws.api.post(`${ws.base}/invoices/${id}/send`, { message: `${n}: ${LONG_MESSAGE}`.slice(0, 10_000) })).status).toBe(200);
    expected.push('documents.invoice.send_requested');
  }
  return { id, expected };
}

const documentOf = (e: Event) => e.document_changed?.document_id ?? e.invoice_send_requested?.document_id ?? 0;

describe('events after a broker outage with a large backlog', () => {
  it('every event is published exactly once, each document’s in the order written; a revocation made meanwhile arrives', async () => {
    const ws = await docsWorkspace(system); // identity publishes on Kafka too: set up before the outage
    const doomedKey = await tokenFor(system, 'live', ws.id, 'read:invoices');
    const changes: Array<{ id: number; expected: string[] }> = [];
    let revokedKeyId = '';
    await stopEngine('kafka', kafkaDir);
    const started = Date.now();
    try {
      // Four writers at a time, as clients would; each document's own changes are sequential.
      for (let i = 0; i < DOCUMENTS; i += 4) changes.push(...(await Promise.all([0, 1, 2, 3].map(() => changeOneDocument(ws)))));
      revokedKeyId = (await system.cli('token', 'revoke', '--token', doomedKey)).revoked;
      process.stderr.write(`[events-backlog] 500 changes and a revocation with the broker down took ${Date.now() - started} ms\n`);
    } finally {
      await startEngine('kafka', kafkaDir);
    }
    expect(changes.reduce((n, c) => n + c.expected.length, 0)).toBe(500);

    // The changes made during the outage; the sends' outcomes (email_delivered / email_failed, applied once
    // the mail service consumed the sends after the outage, each after all of its document's changes) are
    // events of their own, counted by cluster-engine-faults and documents-events.
    const documents = await listen(TOPICS.documents, (e) => e.account_id === ws.id && !/\.email_(delivered|failed)$/.test(e.type));
    const identity = await listen(TOPICS.identity, (e) => e.credential_revoked?.credential_id === revokedKeyId);
    try {
      await eventually(async () => expect(new Set(documents.events.map((e) => e.id)).size).toBe(500), 150_000);
      await eventually(async () => expect(identity.events).toHaveLength(1), 30_000);
      // Exactly once: no event id delivered twice (nothing crashed, so the relay had no reason to repeat one).
      expect(documents.events).toHaveLength(500);
      for (const { id, expected } of changes) {
        const own = documents.events.filter((e) => documentOf(e) === id);
        expect(own.map((e) => e.type)).toEqual(expected);
        expect(own.map((e) => e.sequence)).toEqual(expected.map((_, i) => i + 1));
      }
      expect(identity.events[0]).toMatchObject({ type: 'identity.credential.revoked', account_id: ws.id });
    } finally {
      await documents.close();
      await identity.close();
    }
  }, 600_000);
});
