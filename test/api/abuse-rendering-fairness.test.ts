// Issue #17, "Starve everyone's queues" (rendering): the PDF renderer is shared per workspace in turn,
// with the shipped defaults (2 pages, 1 render at once and 8 waiting per workspace). Workspace A asks
// for many distinct PDFs at once; workspace B's first PDF completes while A's backlog is still being
// rendered — counted in completions, not milliseconds. Runs against both modes.
import { eventually } from '../support/api';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { startSystem, System } from '../support/system';

let system: System;
let a: DocsWorkspace;
let b: DocsWorkspace;

beforeAll(async () => {
  system = await startSystem({ metrics: true });
  [a, b] = await Promise.all([docsWorkspace(system), docsWorkspace(system)]);
});
afterAll(() => system?.stop());

/** The rendering service's metrics page (the one process in embedded mode). */
const renderingMetrics = () => system.metricsUrls[system.mode === 'embedded' ? 'embedded' : 'rendering'];

/** The pdf_render queue's gauges, read off the rendering service's /metrics. */
async function renderQueue(): Promise<{ waiting: number; running: number }> {
  const text = await (await fetch(renderingMetrics())).text();
  const gauge = (name: string) => {
    const row = text.split('\n').find((r) => r.startsWith(`invoicing_work_queue_${name}{queue="pdf_render"} `));
    if (!row) throw new Error(`no ${name} gauge for pdf_render`);
    return Number(row.split(' ')[1]);
  };
  return { waiting: gauge('waiting'), running: gauge('running') };
}

/** A draft whose PDF takes a while to render (many lines, several pages): distinct per call. */
async function longDraft(ws: DocsWorkspace, i: number): Promise<number> {
  const items = Array.from({ length: 200 }, (_, n) => line(String(10 + n), '21', '1', `Položka ${i}-${n}`));
  const res = await ws.api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: items });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body.id;
}

describe("GET …/pdf: one workspace's burst does not hold back another's first PDF", () => {
  it("B's first PDF completes before A's backlog of distinct PDFs has drained", async () => {
    const N = 12;
    const drafts: number[] = [];
    for (let i = 0; i <= N; i++) drafts.push(await longDraft(a, i));
    const small = (await b.api.post(`${b.base}/invoices`, { purchaser_id: b.purchaser, line_items: [line('100')] })).body.id;
    // Chromium warm (its launch is not what is measured).
    expect((await a.api.get(`${a.base}/invoices/${drafts[N]}/pdf`)).status).toBe(200);

    const completions: string[] = [];
    const answers: Array<{ status: number; code?: string; retryAfter: string | null }> = [];
    const burst = drafts.slice(0, N).map((id) =>
      a.api.get(`${a.base}/invoices/${id}/pdf`).then((res) => {
        completions.push('A');
        answers.push({ status: res.status, code: res.body?.error?.code, retryAfter: res.headers.get('retry-after') });
      }),
    );
    // Every one of A's requests has reached the renderer (answered, or waiting or rendering there) and
    // a backlog of A is waiting: only now does B ask.
    await eventually(async () => {
      const queue = await renderQueue();
      expect(queue.waiting).toBeGreaterThanOrEqual(5);
      expect(completions.length + queue.waiting + queue.running).toBeGreaterThanOrEqual(N);
    }, 120_000);
    const answeredBeforeB = completions.length;
    const first = await b.api.get(`${b.base}/invoices/${small}/pdf`);
    completions.push('B');
    expect(first.status).toBe(200);
    expect(first.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    await Promise.all(burst);

    // Waiting in turn behind A's backlog (first come, first served), B would be answered after all but
    // at most one of the renders that were waiting when it asked (the one on the other page). In turn,
    // B takes the page A may not use and A's backlog is still there when B has its PDF.
    const aAfterB = completions.length - 1 - completions.indexOf('B');
    expect(aAfterB).toBeGreaterThanOrEqual(3);
    expect(answeredBeforeB + aAfterB).toBeLessThanOrEqual(N);
    // A is refused (never failed) beyond its share: 200, or 503 renderer_overloaded with Retry-After.
    expect(answers.filter((x) => x.status === 200).length).toBeGreaterThanOrEqual(aAfterB > 0 ? 1 : 0);
    for (const answer of answers) {
      if (answer.status === 200) continue;
      expect(answer).toMatchObject({ status: 503, code: 'renderer_overloaded' });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  });
});
