// Upload, file download and retry_extraction (spec §3, §4 "Upload", "File download"; docs/expenses.md).
//
// Upload: the file streams through the inspection (ports/file-inspector.ts) into the blob store; a file
// the inspection refuses, or a stream that breaks off, makes the blob write fail and nothing is stored
// (the blob port's putStream is all or nothing). Only then is the expense inserted — with the file,
// the job (or `manual` when the quota is used up) and the job's event in its outbox, in one write. If
// that insert is refused, the blob is deleted; a process dying in between leaves a write-ahead record
// (`expense_uploads`) by which the sweeper (upload-sweeper.ts) finds and removes the blob. Under an
// Idempotency-Key, createOnce answers the expense an earlier attempt created before anything is read or
// stored (no second blob, no second charge).
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { BlobStore } from '../../shared/blobs/port';
import { DomainError, fail } from '../../shared/errors';
import { appliedUnder, createdUnder, createOnce, IdempotencyToken, recordedUnder } from '../../shared/idempotency';
import { appendToOutbox, OutboxEntry } from '../../shared/outbox/entries';
import { withExpenseEvent } from './events';
import { DuplicateId, mutate, UniqueViolation, VersionConflict } from '../../shared/store/port';
import { visibleFileName } from '../../shared/validation';
import { ownedBy, Tenant, tenantWhere } from '../../shared/tenant';
import { ExpenseFileData, ExpenseRecord, ExpensesStore } from '../ports/expenses-store';
import { FileInspector, UploadType } from '../ports/file-inspector';
import { Clock } from '../ports/suppliers';
import { checkRetry, retried, uploaded } from './extraction-job';
import { ExtractionQuota, QuotaHold, QuotaTicket } from './extraction-quota';
import { newExpense } from './new-expense';

export const EXTRACTION_REQUESTED = 'expenses.extraction.requested';

/** Test-only latches between the steps of an upload (crash and interleaving tests). */
export interface ExpenseFilesHooks {
  /** After the file is in the blob store, before the expense is written. */
  afterBlobWrite?(expenseId: number, blobKey: string): Promise<void>;
}

export interface ExpenseFilesOptions {
  /** retry_extraction is refused this long after a completion (EXTRACTION_RETRY_COOLDOWN_MS). */
  retryCooldownMs: number;
  /**
   * Called after a write that queued a job, before the answer: marks the workspace's extraction lane,
   * then wakes the outbox relay. A failure here fails nothing (the worker's repair scan touches the lane).
   */
  onQueued?: (expense: ExpenseRecord) => Promise<void>;
}

export interface UploadRequest {
  tenant: Tenant;
  filename: string;
  declaredType: string | null;
  /** The plan's monthly ai_expense_extractions allowance. */
  allowance: number;
}

const EXTENSIONS: Record<UploadType, string> = { 'application/pdf': 'pdf', 'image/jpeg': 'jpg', 'image/png': 'png', 'image/gif': 'gif' };

/** The client's file name as it may be stored (the shared rule: no path, no control or format characters
 * such as bidi overrides, bounded length); a default when none is left. */
export function cleanFileName(name: string, type: UploadType): string {
  return visibleFileName(name) || `expense.${EXTENSIONS[type]}`;
}

export const blobKeyOf = (tenant: Tenant, fileId: string) => `expenses/${tenant.account_id}/${tenant.livemode ? 'live' : 'test'}/${fileId}`;

function jobEvent(record: Pick<ExpenseRecord, 'id' | 'job_id' | 'rejected_job_id' | 'extraction_job'>, now: Date): Omit<OutboxEntry, 'seq'> {
  return {
    id: randomUUID(),
    type: EXTRACTION_REQUESTED,
    occurred_at: now.toISOString(),
    payload: {
      extraction_requested: {
        expense_id: record.id,
        job_id: record.job_id ?? '',
        tier: record.extraction_job?.tier ?? 'standard',
        rejected_job_id: record.rejected_job_id ?? '',
      },
    },
  };
}

export class ExpenseFiles {
  constructor(
    private readonly store: ExpensesStore,
    private readonly blobs: BlobStore,
    private readonly inspector: FileInspector,
    private readonly quota: ExtractionQuota,
    private readonly clock: Clock,
    private readonly options: ExpenseFilesOptions,
    private readonly hooks: ExpenseFilesHooks = {},
  ) {}

  /** Creates the expense of an uploaded file (201 Expense, pending or manual). `chunks` is read at most once. */
  async upload(request: UploadRequest, chunks: AsyncIterable<Uint8Array>, token?: IdempotencyToken): Promise<ExpenseRecord> {
    const { tenant } = request;
    return createOnce(this.store.expenses, tenant, token, async () => {
      // The id first: the write-ahead record of the upload names it, so the sweeper can claim it if
      // this process dies between the blob and the expense (domain/upload-sweeper.ts).
      const id = await this.store.nextId('expenses.expense');
      const key = blobKeyOf(tenant, randomUUID());
      await this.store.uploads.insert({ id, ...tenantWhere(tenant), blob_key: key, state: 'pending', started_at: this.clock.now().getTime() });
      const inspection = this.inspector.inspect(request.declaredType);
      let type: UploadType | undefined;
      async function* inspected() {
        for await (const chunk of chunks) {
          await inspection.push(chunk);
          yield chunk;
        }
        // The verdict on the whole file comes before the blob write completes: a refusal stores nothing.
        type = (await inspection.end()).contentType;
      }
      let size: number;
      try {
        ({ size } = await this.blobs.putStream(key, inspected(), 'application/octet-stream'));
      } catch (err) {
        // A refused or broken-off file stored nothing; after another failure (the blob store's own) the
        // record stays pending and the sweeper makes sure.
        if (err instanceof DomainError) await this.settle(id, 'done');
        throw err;
      }
      await this.hooks.afterBlobWrite?.(id, key);
      const file: ExpenseFileData = { filename: cleanFileName(request.filename, type!), content_type: type!, size, blob_key: key };
      const now = this.clock.now();
      const jobId = randomUUID();
      let ticket: QuotaTicket | null = null;
      let inserted: ExpenseRecord;
      try {
        // The unit is held for this job until the expense (with the job) is written: quota and job commit together.
        ticket = await this.quota.take(tenant, request.allowance, now, { jobId, expenseId: id });
        const record = this.newRecord(tenant, id, jobId, file, ticket !== null, now, token);
        // The expense.created event first, then (with a quota unit) the job: both in this one insert.
        const created = withExpenseEvent(record, 'created', now.toISOString());
        inserted = await this.store.expenses.insert(ticket ? appendToOutbox(created, [jobEvent(record, now)]) : created);
      } catch (err) {
        // Given back only when the expense is known not to be written; otherwise (a lost reply) the hold
        // stays and reconcile decides by whether the job exists.
        if (ticket && (err instanceof DuplicateId || err instanceof UniqueViolation || err instanceof DomainError)) await this.quota.giveBack(ticket).catch(() => undefined);
        if (err instanceof DuplicateId) {
          // The sweeper took this upload for abandoned (it outlived the grace period) and claimed its id;
          // it deletes the blob. Nothing was created: the client may simply send the file again.
          throw fail.unavailable('upload_abandoned', 'the upload took too long to complete and was discarded; send the file again', 1);
        }
        if (err instanceof UniqueViolation) {
          // A racing attempt under the same key won: nothing refers to this blob.
          await this.blobs.delete(key).catch(() => undefined);
          await this.settle(id, 'swept');
        }
        // Any other failure may or may not have written the expense (a lost reply): the sweeper decides.
        throw err;
      }
      if (ticket) {
        await this.quota.commit(ticket).catch(() => undefined); // a hold left behind is committed by reconcile (the job exists)
        await this.options.onQueued?.(inserted).catch(() => undefined);
      }
      await this.settle(id, 'done');
      return inserted;
    });
  }

  /** Whether the job a quota hold names was written (reconcile: the request that took it may have died). */
  async jobWritten(hold: QuotaHold): Promise<boolean> {
    const expense = await this.store.expenses.get(hold.expense_id);
    return expense !== null && (expense.job_id === hold.job_id || expense.rejected_job_id === hold.job_id);
  }

  /** Settles quota holds of requests that died between taking the unit and committing it (run by the sweep timer). */
  reconcileQuota(graceMs: number) {
    return this.quota.reconcile(this.clock.now(), graceMs, (hold) => this.jobWritten(hold));
  }

  /** Best effort: a record left `pending` is resolved by the sweeper. */
  private async settle(id: number, state: 'done' | 'swept'): Promise<void> {
    await mutate(this.store.uploads, id, (u) => (u.state === 'pending' ? { ...u, state } : null)).catch(() => undefined);
  }

  private newRecord(tenant: Tenant, id: number, jobId: string, file: ExpenseFileData, metered: boolean, now: Date, token?: IdempotencyToken): ExpenseRecord {
    return newExpense({ id, account_id: tenant.account_id, livemode: tenant.livemode }, now.toISOString(), {
      ...uploaded(jobId, metered, now),
      file,
      ...createdUnder(token),
    });
  }

  /** The expense's file for download: 404 for a missing expense and for an expense without (or with a lost) file. */
  async openFile(tenant: Tenant, id: number): Promise<{ file: ExpenseFileData; stream: Readable }> {
    const record = await this.store.expenses.get(id);
    if (!record || !ownedBy(record, tenant) || record.deleted !== null) throw fail.notFound('expense');
    if (!record.file) throw fail.notFound('expense file');
    const blob = await this.blobs.openStream(record.file.blob_key);
    if (!blob) throw fail.notFound('expense file');
    return { file: record.file, stream: blob.stream };
  }

  /**
   * retry_extraction (spec §3): 422 no_attachment / extraction_in_progress / retry_cooldown, 402
   * extraction_quota_exhausted; else a new escalated job (pending), the previous job id as
   * rejected_job_id. The rules are checked again inside the compare-and-set that writes the job, so of
   * two racing retries one writes its job and the other is refused (and gives its unit back). Under a
   * key, a retry of the request answers the expense as it is (no second job, no second charge).
   */
  async retry(tenant: Tenant, id: number, allowance: number, token?: IdempotencyToken): Promise<ExpenseRecord> {
    const now = this.clock.now();
    const current = await this.store.expenses.get(id);
    if (!current || !ownedBy(current, tenant) || current.deleted !== null) throw fail.notFound('expense');
    if (appliedUnder(current, token)) return current;
    const rules = { hasFile: current.file !== null, cooldownMs: this.options.retryCooldownMs };
    checkRetry(current, rules, now);
    const jobId = randomUUID();
    const ticket = await this.quota.take(tenant, allowance, now, { jobId, expenseId: id });
    if (!ticket) {
      throw fail.planLimit('extraction_quota_exhausted', 'this month’s ai_expense_extractions are used up; upgrade for more', { feature: 'ai_expense_extractions' });
    }
    let queued = false;
    let written: ExpenseRecord | null;
    try {
      written = await mutate(this.store.expenses, id, (doc) => {
        queued = false;
        if (!ownedBy(doc, tenant) || doc.deleted !== null) throw fail.notFound('expense');
        if (appliedUnder(doc, token)) return null;
        checkRetry(doc, { ...rules, hasFile: doc.file !== null }, now);
        queued = true;
        const next = { ...retried(doc, jobId, now), updated_at: now.toISOString() };
        return recordedUnder(appendToOutbox(withExpenseEvent(next, 'updated', next.updated_at), [jobEvent(next, now)]), token);
      });
    } catch (err) {
      // Refused, or every compare-and-set lost: the job was not written. Anything else (a lost reply)
      // leaves the hold to reconcile, which looks for the job.
      if (err instanceof DomainError || err instanceof VersionConflict) await this.quota.giveBack(ticket).catch(() => undefined);
      throw err;
    }
    if (!written) {
      await this.quota.giveBack(ticket).catch(() => undefined);
      throw fail.notFound('expense');
    }
    if (!queued) {
      await this.quota.giveBack(ticket).catch(() => undefined);
      return written;
    }
    await this.quota.commit(ticket).catch(() => undefined);
    await this.options.onQueued?.(written).catch(() => undefined);
    return written;
  }
}
