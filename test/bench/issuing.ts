// `npm run bench` (after run.ts), or `npm run bench:issuing`: issuing at volume (docs/documents.md,
// "Issuing at volume"). 50 concurrent clients (keep-alive connections, closed loop, load.ts) issue
// drafts of one numbering sequence — every request a different draft, made beforehand — then the
// numbers are checked gapless; the same for credit notes against one invoice whose cap admits all but
// 50 of them (exactly those must be refused, 422, and the cap must hold). Embedded mode, and the
// distributed mode on the real engines with two documents replicas (when the engine URLs are set:
// `set -a; . /work/engines-run/engines.env; set +a`).
//
// Targets (the issue's): 0 × 5xx, gapless; ≥ 200 issues/s embedded, ≥ 100 issues/s distributed;
// p99 ≤ 1 s. Reported, not asserted (a benchmark, not a test). Settings: BENCH_ISSUES (drafts per
// run, default 1500 embedded / 800 distributed), BENCH_CONNECTIONS (50), BENCH_ISSUING_MODES
// (`embedded,distributed`). Report: .bench/issuing.md and .json.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Api } from '../support/api';
import { docsWorkspace, line } from '../support/documents';
import { Mode, startSystem, System } from '../support/system';
import { runLoad, LoadResult } from './load';

const root = path.resolve(__dirname, '../../..');
const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const CONNECTIONS = env('BENCH_CONNECTIONS', 50);
const log = (line: string) => process.stderr.write(`[bench issuing] ${line}\n`);

interface Run {
  mode: Mode;
  kind: 'invoices' | 'credit notes';
  drafts: number;
  load: LoadResult;
  fiveXx: number;
  issued: number;
  refused: number;
  gapless: boolean;
  capHeld?: boolean;
  notes: string[];
}

/** Creates `count` drafts through the API, `parallel` at a time; returns their ids. */
async function createDrafts(api: Api, url: string, body: (i: number) => object, count: number, parallel = 16): Promise<number[]> {
  const ids: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        const res = await api.post(url, body(i));
        if (res.status !== 201) throw new Error(`draft create failed: ${res.status} ${res.text}`);
        ids.push(res.body.id as number);
      }
    }),
  );
  return ids;
}

/** Every document of a list route (all pages). */
async function listAll(api: Api, url: string): Promise<Array<{ status: string; number: string | null }>> {
  const out: Array<{ status: string; number: string | null }> = [];
  let after: string | null = null;
  do {
    const res = await api.get(`${url}?limit=100${after ? `&cursor=${encodeURIComponent(after)}` : ''}`);
    if (res.status !== 200) throw new Error(`list failed: ${res.status} ${res.text}`);
    out.push(...res.body.data);
    after = res.body.has_more ? res.body.next_cursor : null;
  } while (after);
  return out;
}

const gaplessNumbers = (docs: Array<{ status: string; number: string | null }>) => {
  const counters = docs.filter((d) => d.status !== 'draft' && d.number).map((d) => Number(d.number!.slice(4))).sort((a, b) => a - b);
  return { count: counters.length, gapless: counters.every((n, i) => n === i + 1) };
};

async function issueAll(system: System, ws: Awaited<ReturnType<typeof docsWorkspace>>, route: string, ids: number[]): Promise<LoadResult> {
  const port = Number(new URL(system.baseUrl).port);
  return runLoad({
    port,
    method: 'POST',
    path: '',
    paths: ids.map((id) => `${ws.base}/${route}/${id}/issue`),
    headers: { Authorization: `Bearer ${ws.pat}` },
    connections: CONNECTIONS,
    warmupMs: 0,
    durationMs: 600_000,
  });
}

const count = (load: LoadResult, test: (status: number) => boolean) =>
  Object.entries(load.statuses).filter(([status]) => test(Number(status))).reduce((sum, [, n]) => sum + n, 0);

async function benchMode(mode: Mode): Promise<Run[]> {
  const drafts = env('BENCH_ISSUES', mode === 'embedded' ? 1500 : 800);
  log(`${mode}: starting${mode === 'distributed' ? ' (two documents replicas, real engines)' : ''}`);
  const system = await startSystem({
    mode,
    replicas: mode === 'distributed' ? { documents: 2 } : undefined,
    env: { RATE_LIMIT_GENERAL: '1000000000', LOG_LEVEL: 'error' },
  });
  const runs: Run[] = [];
  try {
    const ws = await docsWorkspace(system);
    const api = ws.api;

    log(`${mode}: creating ${drafts} invoice drafts`);
    const invoiceIds = await createDrafts(api, `${ws.base}/invoices`, () => ({ purchaser_id: ws.purchaser, line_items: [line('100')] }), drafts);
    log(`${mode}: ${CONNECTIONS} clients issuing them`);
    const load = await issueAll(system, ws, 'invoices', invoiceIds);
    const numbers = gaplessNumbers(await listAll(api, `${ws.base}/invoices`));
    runs.push({
      mode,
      kind: 'invoices',
      drafts,
      load,
      fiveXx: count(load, (s) => s >= 500),
      issued: numbers.count,
      refused: count(load, (s) => s >= 400 && s < 500),
      // Every 200 got a number and the numbers are 1..n; a 503 is refused before any work, a 504 may or may not
      // have taken effect (its message says so), so issued ≥ 200s.
      gapless: numbers.gapless && numbers.count >= count(load, (s) => s === 200),
      notes: [],
    });
    log(`${mode}: invoices ${load.rps.toFixed(1)} issues/s, p99 ${load.p99Ms.toFixed(0)} ms, statuses ${JSON.stringify(load.statuses)}`);

    // Credit notes: one invoice whose total admits all but 50 notes of 1.00.
    const notesCount = Math.max(100, Math.floor(drafts / 2));
    const fits = notesCount - 50;
    const invoice = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line(String(fits), '0')] });
    // Retried like a client would (with its key) while the previous run's load drains: 503/504 are retryable.
    let issuedInvoice = await api.post(`${ws.base}/invoices/${invoice.body.id}/issue`, undefined, { headers: { 'Idempotency-Key': `bench-${invoice.body.id}` } });
    for (let attempt = 0; attempt < 10 && issuedInvoice.status >= 500; attempt++) {
      issuedInvoice = await api.post(`${ws.base}/invoices/${invoice.body.id}/issue`, undefined, { headers: { 'Idempotency-Key': `bench-${invoice.body.id}` } });
    }
    if (issuedInvoice.status !== 200) throw new Error(`invoice issue failed: ${issuedInvoice.status}`);
    log(`${mode}: creating ${notesCount} credit-note drafts of 1.00 against an invoice of ${fits}.00`);
    const noteIds = await createDrafts(api, `${ws.base}/credit_notes`, () => ({ invoice_id: invoice.body.id, line_items: [line('1', '0')] }), notesCount);
    const noteLoad = await issueAll(system, ws, 'credit_notes', noteIds);
    const noteNumbers = gaplessNumbers(await listAll(api, `${ws.base}/credit_notes`));
    const after = await api.get(`${ws.base}/invoices/${invoice.body.id}`);
    runs.push({
      mode,
      kind: 'credit notes',
      drafts: notesCount,
      load: noteLoad,
      fiveXx: count(noteLoad, (s) => s >= 500),
      issued: noteNumbers.count,
      refused: count(noteLoad, (s) => s === 422),
      gapless: noteNumbers.gapless && noteNumbers.count >= count(noteLoad, (s) => s === 200),
      // The cap: never more credited than the invoice, and the credited amount is exactly the notes issued
      // (when the load was refused in part, fewer than `fits` were issued and the invoice is still partly due).
      capHeld:
        noteNumbers.count <= fits &&
        after.body.credited_amount === `${noteNumbers.count}.00` &&
        after.body.amount_due === `${fits - noteNumbers.count}.00`,
      notes: [],
    });
    log(`${mode}: credit notes ${noteLoad.rps.toFixed(1)} issues/s, p99 ${noteLoad.p99Ms.toFixed(0)} ms, statuses ${JSON.stringify(noteLoad.statuses)}`);
  } finally {
    await system.stop();
  }
  return runs;
}

function markdown(runs: Run[], notes: string[]): string {
  const target = (r: Run) => (r.mode === 'embedded' ? 200 : 100);
  return [
    '# Benchmark: issuing at volume',
    '',
    `Generated ${new Date().toISOString()} by \`npm run bench:issuing\` — ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ${CONNECTIONS} concurrent clients, one numbering sequence.`,
    '',
    '| mode | documents | drafts | issues/s | p50 / p99 ms | 5xx | issued | 422 | gapless | cap held | target issues/s | p99 ≤ 1 s |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|',
    ...runs.map(
      (r) =>
        `| ${r.mode}${r.mode === 'distributed' ? ' (2 documents replicas)' : ''} | ${r.kind} | ${r.drafts} | ${r.load.rps.toFixed(1)} | ${r.load.p50Ms.toFixed(0)} / ${r.load.p99Ms.toFixed(0)} | ${r.fiveXx} | ${r.issued} | ${r.refused} | ${r.gapless ? 'yes' : '**no**'} | ${r.capHeld === undefined ? '—' : r.capHeld ? 'yes' : '**no**'} | ≥ ${target(r)} ${r.load.rps >= target(r) ? 'met' : '**not met**'} | ${r.load.p99Ms <= 1000 ? 'met' : '**not met**'} |`,
    ),
    '',
    ...(notes.length ? ['## Notes', '', ...notes.map((n) => `- ${n}`), ''] : []),
  ].join('\n');
}

async function main(): Promise<void> {
  const modes = (process.env.BENCH_ISSUING_MODES ?? 'embedded,distributed').split(',') as Mode[];
  const notes: string[] = [];
  const runs: Run[] = [];
  for (const mode of modes) {
    if (mode === 'distributed' && !process.env.MONGO_URL) {
      notes.push('distributed mode skipped: the real engines are not configured (source engines.env)');
      continue;
    }
    runs.push(...(await benchMode(mode)));
  }
  const outDir = path.join(root, '.bench');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'issuing.json'), JSON.stringify({ runs, notes }, null, 2) + '\n');
  writeFileSync(path.join(outDir, 'issuing.md'), markdown(runs, notes));
  process.stdout.write(markdown(runs, notes) + '\n');
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`issuing bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
