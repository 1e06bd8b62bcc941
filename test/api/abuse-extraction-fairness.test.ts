// Issue #17, "Starve everyone's queues" (extraction) and "Quota and retries are exact", tried as a hostile
// tenant would (docs/expenses.md "Fair sharing", "Retries"). One workspace queues 30 invoice images
// (real OCR jobs); another workspace's text PDF, uploaded behind that backlog, is delayed by at most the
// image job already running — compared with that very job's service time and a text PDF's own job time,
// both measured in the same run by the service's timestamps, never a fixed figure. A retry while the job
// is pending is refused with extraction_in_progress and queues nothing.
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
  created_at: string;
  updated_at: string;
}

async function read(w: Workspace, id: number): Promise<Expense> {
  return (await apiOf(w).get(`${base(w)}/${id}`)).body;
}

/** When the job of an ended expense ended, by the service's clock (its last write is the job's outcome). */
const ended = (e: Expense) => Date.parse(e.updated_at);

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
    // A text PDF's own job time on an idle queue (upload answered → job ended, by the service's clock).
    const alone = (await upload(other, await pdfFile(), 'application/pdf', 'alone.pdf')).body as Expense;
    await whenLeaves(other, alone.id, ['pending', 'processing']);
    const pdfJob = ended(await read(other, alone.id)) - Date.parse(alone.created_at);

    const image = await invoiceImage();
    const backlog: Expense[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await upload(hog, image, 'image/png', `scan-${i}.png`);
      expect(res.status).toBe(201);
      backlog.push(res.body);
    }
    // One image job has ended, so the one after it has a measurable start (jobs run one at a time).
    await whenLeaves(hog, backlog[0].id, ['pending', 'processing']);
    const pdf = (await upload(other, await pdfFile(), 'application/pdf', 'invoice.pdf')).body as Expense;
    // Queued from the moment the upload is answered (the job and its workspace's lane are written before
    // the answer). The service's timestamps and this clock are the same machine's.
    const arrived = Date.now();
    expect((await whenLeaves(other, pdf.id, ['pending', 'processing'])).status).toBe('completed');
    const pdfEnded = ended(await read(other, pdf.id));

    const images = await Promise.all(backlog.map((e) => read(hog, e.id)));
    const endings = images.filter((e) => ['completed', 'failed'].includes(e.extraction_status)).map(ended).sort((a, b) => a - b);
    // The image job in progress when the PDF arrived: the first to end after it; it started when the one
    // before it ended. Its service time is "one job's time", measured in this run.
    const running = endings.find((t) => t > arrived)!;
    const previous = endings.filter((t) => t < running).at(-1)!;
    expect(previous).toBeDefined();
    const imageJob = running - previous;
    // The PDF waited for at most that image job, then ran: never behind the other images (FIFO: ~25 of them).
    expect(pdfEnded - arrived).toBeLessThanOrEqual(imageJob + pdfJob);
    expect(endings.filter((t) => t > arrived && t < pdfEnded).length).toBeLessThanOrEqual(1);
    expect(images.filter((e) => e.extraction_status === 'pending').length).toBeGreaterThan(0); // the backlog was still there
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
