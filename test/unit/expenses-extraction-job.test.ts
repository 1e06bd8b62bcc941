// The extraction job state machine (services/expenses/domain/extraction-job.ts) and the
// ai_expense_extractions quota (domain/extraction-quota.ts): spec §3 "Extraction status", §8.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  checkRetry,
  claimed,
  completed,
  ExtractionState,
  failed,
  isDue,
  MAX_ATTEMPTS,
  MAX_SANDBOX_KILLS,
  noExtraction,
  retried,
  unfinished,
  uploaded,
} from '../../services/expenses/domain/extraction-job';
import { ExtractionQuota, quotaCountersSpec } from '../../services/expenses/domain/extraction-quota';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';

const t0 = new Date('2026-11-23T10:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const LEASE = 60_000;
const codeOf = (run: () => unknown) => {
  try {
    run();
    return 'allowed';
  } catch (err) {
    return (err as { code: string }).code;
  }
};

describe('upload: a pending standard job, or manual without quota', () => {
  it('pending with the job id when metered', () => {
    const state = uploaded('job-1', true, t0);
    expect(state).toMatchObject({ extraction_status: 'pending', job_id: 'job-1', rejected_job_id: null });
    expect(state.extraction_job).toMatchObject({ id: 'job-1', tier: 'standard', attempts: 0 });
    expect(isDue(state, t0)).toBe(true);
  });

  it('manual, no job, when the quota is used up: nothing will run', () => {
    const state = uploaded('job-1', false, t0);
    expect(state).toMatchObject({ extraction_status: 'manual', job_id: null, extraction_job: null });
    expect(isDue(state, t0)).toBe(false);
  });
});

describe('pending → processing → completed | failed', () => {
  it('a claim takes the job under a lease; only that claim finishes it', () => {
    const pending = uploaded('job-1', true, t0);
    const first = claimed(pending, 'job-1', LEASE, t0)!;
    expect(first.state.extraction_status).toBe('processing');
    expect(first.claim).toEqual({ jobId: 'job-1', attempt: 1 });
    // A second worker (another replica, a duplicate event) finds a live lease: nothing to take.
    expect(claimed(first.state, 'job-1', LEASE, at(1000))).toBeNull();
    const done = completed(first.state, first.claim!, at(2000))!;
    expect(done).toMatchObject({ extraction_status: 'completed', extraction_completed_at: at(2000).getTime() });
    expect(done.extraction_job).toMatchObject({ lease_until: null, finished_at: at(2000).toISOString(), failure: null });
    // Finished jobs are not taken again, nor finished twice.
    expect(claimed(done, 'job-1', LEASE, at(10 * LEASE))).toBeNull();
    expect(completed(done, first.claim!, at(3000))).toBeNull();
  });

  it('a failure ends failed with its reason', () => {
    const { state, claim } = claimed(uploaded('job-1', true, t0), 'job-1', LEASE, t0)!;
    const out = failed(state, claim!, 'timeout', 'the extraction took longer than 60 s', at(60_000))!;
    expect(out.extraction_status).toBe('failed');
    expect(out.extraction_job?.failure).toEqual({ reason: 'timeout', message: 'the extraction took longer than 60 s' });
  });
});

describe('crash recovery: a job is never left in processing', () => {
  it('a claim whose worker died (lease ran out) is taken again; the dead claim cannot finish it afterwards', () => {
    const first = claimed(uploaded('job-1', true, t0), 'job-1', LEASE, t0)!;
    expect(isDue(first.state, at(LEASE - 1))).toBe(false);
    expect(isDue(first.state, at(LEASE))).toBe(true);
    const second = claimed(first.state, 'job-1', LEASE, at(LEASE))!;
    expect(second.claim).toEqual({ jobId: 'job-1', attempt: 2 });
    expect(completed(second.state, first.claim!, at(LEASE + 1))).toBeNull();
    expect(completed(second.state, second.claim!, at(LEASE + 1))?.extraction_status).toBe('completed');
  });

  it(`after ${MAX_ATTEMPTS} interrupted attempts (not the file's doing) the job ends failed (interrupted), not in processing`, () => {
    let state: ExtractionState = uploaded('job-1', true, t0);
    let now = 0;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const taken = claimed(state, 'job-1', LEASE, at(now))!;
      expect(taken.claim?.attempt).toBe(attempt);
      state = unfinished(taken.state, taken.claim!)!; // a dependency failed: no sandbox kill
      now += LEASE;
    }
    const last = claimed(state, 'job-1', LEASE, at(now))!;
    expect(last.claim).toBeNull();
    expect(last.state.extraction_status).toBe('failed');
    expect(last.state.extraction_job?.failure?.reason).toBe('interrupted');
    expect(isDue(last.state, at(now * 2))).toBe(false);
  });
});

describe(`sandbox kills: a job that killed its sandbox ${MAX_SANDBOX_KILLS} times is not offered again`, () => {
  it('each claim counts a kill with its lease; an answer (completed, or a failure that is no kill) takes it back', () => {
    const taken = claimed(uploaded('job-1', true, t0), 'job-1', LEASE, t0)!;
    expect(taken.state.extraction_job).toMatchObject({ attempts: 1, sandbox_kills: 1, lease_until: t0.getTime() + LEASE });
    expect(completed(taken.state, taken.claim!, at(10))!.extraction_job?.sandbox_kills).toBe(0);
    expect(failed(taken.state, taken.claim!, 'too_many_pages', '500 pages', at(10))!.extraction_job?.sandbox_kills).toBe(0);
  });

  it.each(['timeout', 'memory_limit', 'crashed'] as const)('a %s failure keeps its kill', (reason) => {
    const taken = claimed(uploaded('job-1', true, t0), 'job-1', LEASE, t0)!;
    expect(failed(taken.state, taken.claim!, reason, 'killed', at(10))!.extraction_job).toMatchObject({ sandbox_kills: 1, failure: { reason } });
  });

  it(`after ${MAX_SANDBOX_KILLS} claims whose process died the next claim ends the job failed (crashed): no further attempt`, () => {
    let state: ExtractionState = uploaded('job-1', true, t0);
    let now = 0;
    for (let attempt = 1; attempt <= MAX_SANDBOX_KILLS; attempt++) {
      state = claimed(state, 'job-1', LEASE, at(now))!.state;
      now += LEASE;
    }
    const next = claimed(state, 'job-1', LEASE, at(now))!;
    expect(next.claim).toBeNull();
    expect(next.state.extraction_status).toBe('failed');
    expect(next.state.extraction_job).toMatchObject({ attempts: MAX_SANDBOX_KILLS, sandbox_kills: MAX_SANDBOX_KILLS, failure: { reason: 'crashed' } });
    expect(isDue(next.state, at(now * 2))).toBe(false);
  });

  it('records written before the count existed start from 0', () => {
    const old = uploaded('job-1', true, t0);
    delete (old.extraction_job as { sandbox_kills?: number }).sandbox_kills;
    expect(claimed(old, 'job-1', LEASE, t0)!.state.extraction_job?.sandbox_kills).toBe(1);
  });
});

describe('retry_extraction', () => {
  const completedAt = (ms: number) => {
    const { state, claim } = claimed(uploaded('job-1', true, t0), 'job-1', LEASE, t0)!;
    return completed(state, claim!, at(ms))!;
  };

  it('422 no_attachment without a file', () => {
    expect(codeOf(() => checkRetry(noExtraction(), { hasFile: false, cooldownMs: 0 }, t0))).toBe('no_attachment');
  });

  it('422 retry_cooldown within the cooldown after a completion; allowed from its end', () => {
    const done = completedAt(1000);
    expect(codeOf(() => checkRetry(done, { hasFile: true, cooldownMs: 30_000 }, at(30_999)))).toBe('retry_cooldown');
    expect(codeOf(() => checkRetry(done, { hasFile: true, cooldownMs: 30_000 }, at(31_000)))).toBe('allowed');
  });

  it('422 extraction_in_progress while a job is pending or processing (also under a lapsed lease: it is taken again)', () => {
    const pending = uploaded('job-1', true, t0);
    const { state: processing } = claimed(pending, 'job-1', LEASE, t0)!;
    for (const [s, now] of [[pending, t0], [processing, t0], [processing, at(LEASE + 1)]] as const) {
      expect(codeOf(() => checkRetry(s, { hasFile: true, cooldownMs: 0 }, now))).toBe('extraction_in_progress');
    }
  });

  it('422 retry_cooldown within the cooldown after a failure too; allowed from its end', () => {
    const { state, claim } = claimed(uploaded('job-1', true, t0), 'job-1', LEASE, t0)!;
    const failedAt1s = failed(state, claim!, 'unreadable', 'x', at(1000))!;
    expect(codeOf(() => checkRetry(failedAt1s, { hasFile: true, cooldownMs: 30_000 }, at(30_999)))).toBe('retry_cooldown');
    expect(codeOf(() => checkRetry(failedAt1s, { hasFile: true, cooldownMs: 30_000 }, at(31_000)))).toBe('allowed');
  });

  it('a manual expense with a file (no job ever ran) may be retried at once', () => {
    expect(codeOf(() => checkRetry(uploaded('job-1', false, t0), { hasFile: true, cooldownMs: 3_600_000 }, t0))).toBe('allowed');
  });

  it('the new job is escalated and pending; the previous job id moves to rejected_job_id', () => {
    const again = retried(completedAt(1000), 'job-2', at(5000));
    expect(again).toMatchObject({ extraction_status: 'pending', job_id: 'job-2', rejected_job_id: 'job-1' });
    expect(again.extraction_job).toMatchObject({ id: 'job-2', tier: 'escalated', attempts: 0 });
  });

  it('a retry while the old job runs: the old claim can no longer write, the new job can be claimed', () => {
    const running = claimed(uploaded('job-1', true, t0), 'job-1', LEASE, t0)!;
    const again = retried(running.state, 'job-2', at(1000));
    expect(completed(again, running.claim!, at(2000))).toBeNull();
    expect(failed(again, running.claim!, 'timeout', 'x', at(2000))).toBeNull();
    expect(claimed(again, 'job-1', LEASE, at(2000))).toBeNull();
    expect(claimed(again, 'job-2', LEASE, at(2000))?.claim).toEqual({ jobId: 'job-2', attempt: 1 });
  });

  it('a retry of a manual expense (no job before) leaves rejected_job_id as it was', () => {
    expect(retried(uploaded('job-1', false, t0), 'job-2', t0)).toMatchObject({ job_id: 'job-2', rejected_job_id: null, extraction_status: 'pending' });
  });
});

describe('the ai_expense_extractions quota', () => {
  const open = () => {
    const store = new SqliteDocumentStore(path.join(mkdtempSync(path.join(os.tmpdir(), 'quota-')), 'store.db'));
    return new ExtractionQuota(store.collection(quotaCountersSpec), () => store.nextId('quota'));
  };
  const live = { account_id: 1, livemode: true };

  const job = (n: number) => ({ jobId: `job-${n}`, expenseId: n });

  it('allows exactly the allowance per month, live and sandbox apart; a new month starts afresh', async () => {
    const quota = open();
    expect(await quota.take(live, 2, t0, job(1))).not.toBeNull();
    expect(await quota.take(live, 2, t0, job(2))).not.toBeNull();
    expect(await quota.take(live, 2, t0, job(3))).toBeNull();
    expect(await quota.used(live, t0)).toBe(2);
    expect(await quota.take({ account_id: 1, livemode: false }, 2, t0, job(4))).not.toBeNull();
    expect(await quota.take({ account_id: 2, livemode: true }, 2, t0, job(5))).not.toBeNull();
    expect(await quota.take(live, 2, new Date('2026-12-01T00:00:00Z'), job(6))).not.toBeNull();
  });

  it('a plan without the quota allows none', async () => {
    expect(await open().take(live, 0, t0, job(1))).toBeNull();
  });

  it('20 concurrent requests for the last 3 extractions: exactly 3 get one', async () => {
    const quota = open();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => quota.take(live, 3, t0, job(i))));
    expect(results.filter(Boolean)).toHaveLength(3);
    expect(await quota.used(live, t0)).toBe(3);
  });

  it('giveBack returns the unit once, however often it is called (a request whose job was not written)', async () => {
    const quota = open();
    const ticket = (await quota.take(live, 2, t0, job(1)))!;
    await quota.take(live, 2, t0, job(2));
    await quota.giveBack(ticket);
    await quota.giveBack(ticket);
    expect(await quota.used(live, t0)).toBe(1);
  });

  it('reconcile: a hold older than the grace is committed when its job was written, given back when not; younger holds wait', async () => {
    const quota = open();
    await quota.take(live, 5, t0, job(1));
    await quota.take(live, 5, t0, job(2));
    await quota.take(live, 5, at(50_000), job(3));
    const written = new Set(['job-1']);
    expect(await quota.reconcile(at(60_000), 60_000, async (h) => written.has(h.job_id))).toEqual({ committed: 1, returned: 1 });
    expect(await quota.used(live, t0)).toBe(2);
    expect(await quota.reconcile(at(110_000), 60_000, async () => false)).toEqual({ committed: 0, returned: 1 });
    expect(await quota.used(live, t0)).toBe(1);
  });

  it('a request that outlived the grace: reconcile gave its unit back, its commit charges it again; a commit after reconcile committed changes nothing', async () => {
    const quota = open();
    const late = (await quota.take(live, 5, t0, job(1)))!;
    const committedByReconcile = (await quota.take(live, 5, t0, job(2)))!;
    await quota.reconcile(at(60_000), 60_000, async (h) => h.job_id === 'job-2');
    expect(await quota.used(live, t0)).toBe(1);
    await quota.commit(late);
    await quota.commit(committedByReconcile);
    expect(await quota.used(live, t0)).toBe(2);
  });
});
