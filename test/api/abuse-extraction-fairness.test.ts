// Issue #17, "Starve everyone's queues" (extraction) and "Quota and retries are exact", tried as a hostile
// tenant would (docs/expenses.md "Fair sharing", "Retries"). One workspace queues 30 invoice images
// (real OCR jobs); another workspace's text PDF, uploaded behind that backlog, is delayed by at most the
// image job already running — measured against that very job's service time in the same run, not a fixed
// figure. A retry while the job is pending is refused with extraction_in_progress and queues nothing.
import { Api, ApiResponse, eventually } from '../support/api';
import { invoiceImage, pdfFile } from '../support/expense-files';
import { createWorkspace, Workspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

let system: System;
let hog: Workspace;
let other: Workspace;

beforeAll(async () => {
  // One extraction at a time in the one expenses process (the default): the backlog is a real queue.
  system = await startSystem({ env: { EXTRACTION_CONCURRENCY: '1', EXTRACTION_POLL_MS: '500', RATE_LIMIT_GENERAL: '1000000' } });
  hog = await createWorkspace(system, 'Backlog s.r.o.');
  other = await createWorkspace(system, 'Neighbour s.r.o.');
});
afterAll(() => system?.stop());

const apiOf = (w: Workspace) => new Api(system.baseUrl, w.pat);
const base = (w: Workspace) => `/api/v1/accounts/${w.id}/expenses`;

function upload(w: Workspace, file: Buffer, type: string, name: string): Promise<ApiResponse> {
  const body = new FormData();
  body.append('file', new Blob([file], { type }), name);
  return apiOf(w).request('POST', `${base(w)}/upload`, { rawBody: body });
}

interface Expense {
  id: number;
  extraction_status: string;
  job_id: string | null;
}

async function statusOf(w: Workspace, id: number): Promise<string> {
  return ((await apiOf(w).get(`${base(w)}/${id}`)).body as Expense).extraction_status;
}

/** Polls `id` until it leaves `from` statuses; answers when that was first seen (client clock). */
async function whenLeaves(w: Workspace, id: number, from: string[], timeoutMs = 600_000): Promise<{ status: string; at: number }> {
  return eventually(async () => {
    const status = await statusOf(w, id);
    if (from.includes(status)) throw new Error(`expense ${id} still ${status}`);
    return { status, at: Date.now() };
  }, timeoutMs);
}

describe('Fair sharing: extraction jobs are taken per workspace in turn', () => {
  it('one workspace’s 30 queued image uploads delay another workspace’s text PDF by at most one image job', async () => {
    const image = await invoiceImage();
    const backlog: Expense[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await upload(hog, image, 'image/png', `scan-${i}.png`);
      expect(res.status).toBe(201);
      backlog.push(res.body);
    }
    // The image job running when the neighbour uploads: the first of the backlog once it is processing.
    const running = backlog[0];
    const startedAt = (await whenLeaves(hog, running.id, ['pending'])).at;
    const pdf = await upload(other, await pdfFile(), 'application/pdf', 'invoice.pdf');
    expect(pdf.status).toBe(201);
    const uploadedAt = Date.now();
    const [runningDone, pdfDone] = await Promise.all([whenLeaves(hog, running.id, ['pending', 'processing']), whenLeaves(other, pdf.body.id, ['pending', 'processing'])]);
    expect(pdfDone.status).toBe('completed');
    // That image job's own service time, as observed from its start (seen processing) to its end.
    const imageJob = runningDone.at - startedAt;
    const pdfWait = pdfDone.at - uploadedAt;
    // The PDF waited for the image job in progress, then ran: never behind the other 29.
    expect(pdfWait).toBeLessThanOrEqual(imageJob + (pdfDone.at - runningDone.at));
    expect(pdfDone.at - runningDone.at).toBeLessThan(imageJob);
    // And structurally: no other image job of the backlog finished before the PDF did.
    const finished = await Promise.all(backlog.slice(1).map(async (e) => statusOf(hog, e.id)));
    expect(finished.filter((s) => s === 'completed' || s === 'failed').length).toBeLessThanOrEqual(1);
  });
});

describe('Retries: one job per expense at a time', () => {
  it('a retry while the job is pending is refused (422 extraction_in_progress) and queues nothing', async () => {
    // Behind the backlog, this upload stays pending.
    const created = (await upload(hog, await invoiceImage(), 'image/png', 'late.png')).body as Expense;
    expect(await statusOf(hog, created.id)).toBe('pending');
    const retry = await apiOf(hog).post(`${base(hog)}/${created.id}/retry_extraction`, undefined);
    expect(retry.status).toBe(422);
    expect(retry.body.error.code).toBe('extraction_in_progress');
    expect((await apiOf(hog).get(`${base(hog)}/${created.id}`)).body).toMatchObject({ job_id: created.job_id, rejected_job_id: null });
  });
});
