// Idempotency after an ambiguous failure, measured (issue #8): 20 clients create and issue invoices
// with fresh Idempotency-Keys against the embedded system while the process is SIGKILLed 5 times at
// seeded random moments. Every request whose outcome is unknown (connection reset or refused, 5xx,
// 409 idempotency_in_progress / concurrent_modification) is retried with the same key and body until
// it gets a final answer, as a careful client does. Then: no acknowledged write is lost, no create
// produced a second invoice, and no retried issue was refused as not_draft after it had succeeded.
import { randomUUID } from 'node:crypto';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { startSystem, System } from '../support/system';
import { random as seeded } from '../../deploy/seed/fake'; // mulberry32: the kill moments are the same on every run

const CLIENTS = 20;
const KILLS = 5;
const SEED = 0x8badf00d;
/** A request that gets no final answer within this long fails the test (a lease or lock that never lets go). */
const GIVE_UP_MS = 45_000;
/**
 * How long after the system is back (its last restart) a request may still wait for its final answer.
 * The old 30 s lease made a retry of a killed request wait out the rest of the lease (~20–30 s) after
 * the restart; now the dead process's markers are dropped at restart.
 */
const SLOWEST_AFTER_RESTART_MS = 10_000;


const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let system: System;
let ws: DocsWorkspace;
/** When the system last came back from a kill. */
let upSince = 0;

beforeAll(async () => {
  // 20 clients issue several hundred requests a minute with one credential: the general limit (300/min,
  // tested in edge-rate-limits) would answer 429, which is not what this test is about.
  system = await startSystem({ mode: 'embedded', env: { RATE_LIMIT_GENERAL: '100000' } });
  ws = await docsWorkspace(system);
}, 300_000);

afterAll(async () => {
  await system?.stop();
});

interface Final {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** How many attempts ended without a final answer before this one. */
  unknown: number;
  /** From the first attempt, or the system's last restart if later, to the final answer. */
  afterUpMs: number;
}

const RETRYABLE_409 = new Set(['idempotency_in_progress', 'concurrent_modification']);

/** POSTs `body` under `key` until the answer is final (the system may be down or restarting meanwhile). */
async function postUntilFinal(path: string, key: string, body: object): Promise<Final> {
  const started = Date.now();
  const payload = JSON.stringify(body);
  let unknown = 0;
  let last = '';
  for (;;) {
    if (Date.now() - started > GIVE_UP_MS) throw new Error(`no final answer for POST ${path} (key ${key}) in ${GIVE_UP_MS} ms; last: ${last}`);
    try {
      const res = await fetch(system.baseUrl + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${ws.pat}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: payload,
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      const parsed = text ? JSON.parse(text) : undefined;
      const retryable = res.status >= 500 || (res.status === 409 && RETRYABLE_409.has(parsed?.error?.code));
      last = `${res.status} ${parsed?.error?.code ?? ''}`;
      if (!retryable) return { status: res.status, body: parsed, unknown, afterUpMs: Date.now() - Math.max(started, upSince) };
    } catch (err) {
      // Reset, refused (the process is down) or cut off mid-answer: the outcome is unknown.
      last = String((err as Error).cause ?? err);
    }
    unknown += 1;
    await sleep(50 + Math.floor(Math.random() * 100));
  }
}

interface ClientLog {
  note: string;
  /** Invoice ids whose create was acknowledged (201). */
  created: number[];
  /** Invoice ids whose issue was acknowledged (200). */
  issued: number[];
  unknownCreates: number;
  unknownIssues: number;
  /** Retried issues answered 422 not_draft although the invoice was this client's own draft. */
  falseRefusals: number;
  unexpected: string[];
  slowestMs: number;
}

async function client(index: number, running: () => boolean): Promise<ClientLog> {
  const log: ClientLog = { note: `kill-test client ${index}`, created: [], issued: [], unknownCreates: 0, unknownIssues: 0, falseRefusals: 0, unexpected: [], slowestMs: 0 };
  while (running()) {
    const create = await postUntilFinal(`${ws.base}/invoices`, randomUUID(), {
      purchaser_id: ws.purchaser,
      note: log.note,
      line_items: [line('100', '21', '1', `item ${log.created.length}`)],
    });
    if (create.unknown) log.unknownCreates += 1;
    log.slowestMs = Math.max(log.slowestMs, create.afterUpMs);
    if (create.status !== 201) {
      log.unexpected.push(`create → ${create.status} ${JSON.stringify(create.body)}`);
      continue;
    }
    log.created.push(create.body.id);
    const issue = await postUntilFinal(`${ws.base}/invoices/${create.body.id}/issue`, randomUUID(), {});
    if (issue.unknown) log.unknownIssues += 1;
    log.slowestMs = Math.max(log.slowestMs, issue.afterUpMs);
    if (issue.status === 200) log.issued.push(create.body.id);
    else if (issue.status === 422 && issue.body?.error?.code === 'not_draft') log.falseRefusals += 1;
    else log.unexpected.push(`issue → ${issue.status} ${JSON.stringify(issue.body)}`);
  }
  return log;
}

/** Every invoice of the workspace, all pages. */
async function allInvoices(): Promise<Array<{ id: number; note: string | null; status: string; number: string | null }>> {
  const rows = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=100&cursor=${encodeURIComponent(cursor)}` : '?limit=100';
    const res = await fetch(`${system.baseUrl}${ws.base}/invoices${query}`, { headers: { authorization: `Bearer ${ws.pat}` } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: Array<{ id: number; note: string | null; status: string; number: string | null }>; has_more: boolean; next_cursor: string | null };
    rows.push(...page.data);
    cursor = page.has_more ? page.next_cursor : null;
  } while (cursor);
  return rows;
}

describe('Idempotency-Key after a crash (5 SIGKILLs under 20 clients creating and issuing invoices)', () => {
  it('loses no acknowledged write, creates no duplicate and refuses no retried issue that had succeeded', async () => {
    const random = seeded(SEED);
    let running = true;
    const clients = Array.from({ length: CLIENTS }, (_, i) => client(i, () => running));
    let slowestRestart = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      await sleep(400 + Math.floor(random() * 1600));
      const killedAt = Date.now();
      await system.killGateway();
      await system.restart();
      upSince = Date.now();
      slowestRestart = Math.max(slowestRestart, upSince - killedAt);
    }
    await sleep(500);
    running = false;
    const logs = await Promise.all(clients);

    const invoices = await allInvoices();
    const byId = new Map(invoices.map((inv) => [inv.id, inv]));
    const unknownCreates = logs.reduce((n, l) => n + l.unknownCreates, 0);
    const unknownIssues = logs.reduce((n, l) => n + l.unknownIssues, 0);
    const created = logs.reduce((n, l) => n + l.created.length, 0);
    const slowest = Math.max(...logs.map((l) => l.slowestMs));
    // The measurement, as the issue reports it.
    console.info(
      `${KILLS} kills: ${created} invoices created (${unknownCreates} after an unknown outcome), ` +
        `${unknownIssues} issues retried after an unknown outcome, slowest final answer ${slowest} ms after the system was back, slowest restart ${slowestRestart} ms`,
    );
    // No retry waits out a dead attempt's lease.
    expect(slowest).toBeLessThan(SLOWEST_AFTER_RESTART_MS);
    // The kills did hit requests in flight: otherwise this test would prove nothing.
    expect(unknownCreates + unknownIssues).toBeGreaterThan(0);
    for (const log of logs) {
      expect(log.unexpected).toEqual([]);
      expect(log.falseRefusals).toBe(0);
      // 0 acknowledged writes lost: every acknowledged create exists, every acknowledged issue is issued.
      expect(log.created.filter((id) => !byId.has(id))).toEqual([]);
      expect(log.issued.filter((id) => byId.get(id)?.status !== 'exposed' || !byId.get(id)?.number)).toEqual([]);
      // 0 duplicates: this client's invoices are exactly the ones it was told about.
      const mine = invoices.filter((inv) => inv.note === log.note).map((inv) => inv.id).sort((a, b) => a - b);
      expect(mine).toEqual([...log.created].sort((a, b) => a - b));
    }
  }, 300_000);
});
