// The extraction job of an expense, as pure transitions on the expense's extraction state (spec §3,
// docs/expenses.md "Extraction"): pending → processing → completed | failed, and manual. Every change
// is written by a compare-and-set on the expense, so whoever applies a transition applies it to the
// version it read: a retry that replaced the job makes the old job's late result a no-op, a second
// worker cannot claim a job whose lease is live, and a job whose worker died (its lease ran out) is
// claimed again — up to MAX_ATTEMPTS, after which it ends `failed` (reason `interrupted`). A job that
// killed its sandbox MAX_SANDBOX_KILLS times ends `failed` too (docs/extraction.md "Sandbox").
import { fail } from '../../shared/errors';
import type { ExtractionJobData, ExtractionStatus } from '../ports/expenses-store';
import type { ExtractedFields, ExtractionTier, FieldConfidence } from '../ports/extractor';

/** A job whose worker died this many times (a file that crashes the process) is not tried again. */
export const MAX_ATTEMPTS = 3;

/**
 * A job that killed its sandbox this many times is not offered again: it ends `failed`. Each claim counts
 * one kill with its lease (presumed: a process that dies under the job has counted it already, so the
 * count survives the crash); an attempt that got an answer takes it back when it writes its outcome.
 */
export const MAX_SANDBOX_KILLS = 2;

export type FailureReason = 'unreadable' | 'too_many_pages' | 'too_large' | 'timeout' | 'memory_limit' | 'crashed' | 'provider_error' | 'interrupted' | 'internal';

/** Failures that are the sandbox's kills (time limit, memory limit, crash): they keep the claim's count. */
const SANDBOX_KILLS: readonly FailureReason[] = ['timeout', 'memory_limit', 'crashed'];

/** Stored on the expense (ports/expenses-store.ts). */
export type ExtractionJob = ExtractionJobData;

export interface ExtractionOutcome {
  fields: ExtractedFields;
  confidence: FieldConfidence;
  method: 'text_layer' | 'ocr' | 'provider';
  pages: number;
}

/** The extraction fields of an expense record. */
export interface ExtractionState {
  extraction_status: ExtractionStatus;
  job_id: string | null;
  rejected_job_id: string | null;
  /** Absent on expenses created through the JSON endpoint (manual from the start). */
  extraction_job?: ExtractionJob | null;
  /** Epoch ms when the last job completed (the retry cooldown counts from it). */
  extraction_completed_at?: number | null;
  /** The job's place in its workspace's queue: minus the epoch ms it was requested, so the store's
   * descending order reads the oldest first (domain/extraction-queue.ts). */
  job_rank?: number | null;
}

export const noExtraction = (): ExtractionState => ({
  extraction_status: 'manual',
  job_id: null,
  rejected_job_id: null,
  extraction_job: null,
  extraction_completed_at: null,
});

/** Oldest first under the store's descending order (see ExtractionState.job_rank). */
export const jobRank = (requested: Date) => -requested.getTime();

const newJob = (id: string, tier: ExtractionTier, now: Date): ExtractionJob => ({
  id,
  tier,
  requested_at: now.toISOString(),
  attempts: 0,
  sandbox_kills: 0,
  lease_until: null,
  started_at: null,
  finished_at: null,
  failure: null,
});

/**
 * The state of a freshly uploaded file: a pending `standard` job, or `manual` (no job) when the plan's
 * extraction quota is used up — the file is kept, the fields are entered by hand.
 */
export function uploaded(jobId: string, metered: boolean, now: Date): ExtractionState {
  if (!metered) return noExtraction();
  return { ...noExtraction(), extraction_status: 'pending', job_id: jobId, extraction_job: newJob(jobId, 'standard', now), job_rank: jobRank(now) };
}

export interface RetryRules {
  hasFile: boolean;
  /** No retry within this long after a job ended, completed or failed (spec §3; EXTRACTION_RETRY_COOLDOWN_MS). */
  cooldownMs: number;
}

/** When the current job ended (completed or failed), epoch ms; null while none has ended. */
function endedAt(state: ExtractionState): number | null {
  if (state.extraction_status === 'completed') return state.extraction_completed_at ?? null;
  if (state.extraction_status === 'failed' && state.extraction_job?.finished_at) return Date.parse(state.extraction_job.finished_at);
  return null;
}

/**
 * Checks a retry_extraction request (spec §3): 422 `no_attachment` without a file; 422
 * `extraction_in_progress` while a job is pending or processing (one job per expense at a time: each
 * retry would otherwise start another escalated job and take another quota unit); 422 `retry_cooldown`
 * within the cooldown after a job ended, completed or failed. Throws; returns nothing.
 */
export function checkRetry<S extends ExtractionState>(state: S, rules: RetryRules, now: Date): void {
  if (!rules.hasFile) throw fail.precondition('no_attachment', 'this expense has no attached file to extract from');
  if (state.extraction_status === 'pending' || state.extraction_status === 'processing') {
    throw fail.precondition('extraction_in_progress', `an extraction of this expense is ${state.extraction_status}; retry after it ends`);
  }
  const ended = endedAt(state);
  if (ended !== null) {
    const wait = ended + rules.cooldownMs - now.getTime();
    if (wait > 0) throw fail.precondition('retry_cooldown', `the extraction ended recently; retry in ${Math.ceil(wait / 1000)} s`);
  }
}

/** A retry: a new `escalated` job; the job it replaces becomes rejected_job_id (even while it runs: its result is then ignored). */
export function retried<S extends ExtractionState>(state: S, jobId: string, now: Date): S {
  return {
    ...state,
    extraction_status: 'pending',
    rejected_job_id: state.job_id ?? state.rejected_job_id,
    job_id: jobId,
    extraction_job: newJob(jobId, 'escalated', now),
    job_rank: jobRank(now),
  };
}

/** Whether a worker should take the job now: pending, or processing under a lease that ran out (its worker died). */
export function isDue(state: ExtractionState, now: Date): boolean {
  const job = state.extraction_job;
  if (!job || job.id !== state.job_id) return false;
  if (state.extraction_status === 'pending') return true;
  return state.extraction_status === 'processing' && (job.lease_until ?? 0) <= now.getTime();
}

export interface Claim {
  jobId: string;
  attempt: number;
}

/**
 * Takes job `jobId` for one attempt: processing, attempts + 1, a lease until now + leaseMs. Null when
 * there is nothing to take (another job replaced it, it finished, another worker's lease is live).
 * A job already claimed MAX_ATTEMPTS times whose lease ran out ends `failed` (`interrupted`) instead:
 * the returned state has no claim then.
 */
export function claimed<S extends ExtractionState>(state: S, jobId: string, leaseMs: number, now: Date): { state: S; claim: Claim | null } | null {
  const job = state.extraction_job;
  if (!job || state.job_id !== jobId || job.id !== jobId || !isDue(state, now)) return null;
  const kills = job.sandbox_kills ?? 0;
  if (kills >= MAX_SANDBOX_KILLS) {
    return { state: finished(state, job, 'failed', now, { reason: 'crashed', message: `the extraction ended its sandbox ${kills} times without an answer; it is not tried again` }), claim: null };
  }
  if (job.attempts >= MAX_ATTEMPTS) {
    return { state: finished(state, job, 'failed', now, { reason: 'interrupted', message: `the extraction was interrupted ${job.attempts} times` }), claim: null };
  }
  const attempt = job.attempts + 1;
  const next: ExtractionJob = { ...job, attempts: attempt, sandbox_kills: kills + 1, lease_until: now.getTime() + leaseMs, started_at: job.started_at ?? now.toISOString() };
  return { state: { ...state, extraction_status: 'processing', extraction_job: next }, claim: { jobId, attempt } };
}

/** Whether `claim` still owns the job (same job, same attempt, still processing). */
export function owns(state: ExtractionState, claim: Claim): boolean {
  const job = state.extraction_job;
  return state.extraction_status === 'processing' && state.job_id === claim.jobId && job?.id === claim.jobId && job.attempts === claim.attempt;
}

function finished<S extends ExtractionState>(state: S, job: ExtractionJob, status: 'completed' | 'failed', now: Date, failure: ExtractionJob['failure']): S {
  return { ...state, extraction_status: status, extraction_job: { ...job, lease_until: null, finished_at: now.toISOString(), failure } };
}

/** The claim's success (the caller writes what was read in the same write); null when the claim no
 * longer owns the job (replaced by a retry, taken over after its lease). */
export function completed<S extends ExtractionState>(state: S, claim: Claim, now: Date): S | null {
  if (!owns(state, claim)) return null;
  return { ...finished(state, answered(state.extraction_job!), 'completed', now, null), extraction_completed_at: now.getTime() };
}

/** The claim's presumed sandbox kill taken back: the attempt got an answer (or never reached the sandbox). */
const answered = (job: ExtractionJob): ExtractionJob => ({ ...job, sandbox_kills: Math.max(0, (job.sandbox_kills ?? 0) - 1) });

/** An attempt that ends without writing its outcome for a reason that is not the file's (the store, the
 * blobs, the contacts service failed): its presumed kill is taken back; the job stays processing and is
 * taken again when the lease lapses (counted by MAX_ATTEMPTS). Null when the claim no longer owns it. */
export function unfinished<S extends ExtractionState>(state: S, claim: Claim): S | null {
  if (!owns(state, claim)) return null;
  return { ...state, extraction_job: answered(state.extraction_job!) };
}

/** The claim's failure; null when the claim no longer owns the job. */
export function failed<S extends ExtractionState>(state: S, claim: Claim, reason: FailureReason, message: string, now: Date): S | null {
  if (!owns(state, claim)) return null;
  const job = state.extraction_job!;
  return finished(state, SANDBOX_KILLS.includes(reason) ? job : answered(job), 'failed', now, { reason, message });
}
