// Removes the blobs of uploads whose process died between writing the file and writing the expense
// (docs/expenses.md, "Orphaned files"). Every upload first writes a record under the id its expense will
// have (`expense_uploads`, state pending) and settles it once the expense is written. A record still
// pending after the grace period is claimed by inserting a deleted placeholder expense under that id:
//
// - the insert succeeds → no expense can ever be written under the id (the upload's own insert would
//   fail on the duplicate id and answer 503 upload_abandoned), so nothing refers to the blob: delete it;
// - the insert fails on the duplicate id → the expense exists (its upload got through but did not
//   settle the record, or an earlier sweep claimed it and died before deleting): the blob is kept if
//   the expense refers to it, deleted otherwise.
//
// The claim is one single-document insert, so the decision is safe under any interleaving with an
// in-flight upload and with other replicas sweeping at once; the grace period only decides how long an
// upload may take before it is given up (its record, not its blob, is looked at: no blob listing).
import type { BlobStore } from '../../shared/blobs/port';
import { DuplicateId, mutate } from '../../shared/store/port';
import { ExpenseRecord, ExpensesStore, PendingUploadRecord } from '../ports/expenses-store';
import { Clock } from '../ports/suppliers';
import { newExpense } from './new-expense';

export interface SweepOptions {
  /** An upload pending longer than this is abandoned (EXPENSE_UPLOAD_GRACE_MS). */
  graceMs: number;
}

export interface SweepResult {
  /** Blobs deleted: their expense was never written. */
  removed: number;
  /** Records settled whose expense exists. */
  kept: number;
}

const BATCH = 100;

/** The deleted placeholder that claims an abandoned upload's expense id (never listed, read as 404). */
function placeholder(upload: PendingUploadRecord, at: string): Omit<ExpenseRecord, 'version'> {
  const { version: _unversioned, ...record } = newExpense({ id: upload.id, account_id: upload.account_id, livemode: upload.livemode }, at, { deleted: at });
  return record;
}

export class UploadSweeper {
  constructor(
    private readonly store: ExpensesStore,
    private readonly blobs: Pick<BlobStore, 'delete'>,
    private readonly clock: Clock,
    private readonly options: SweepOptions,
  ) {}

  /** One pass over the pending uploads older than the grace period. */
  async sweep(): Promise<SweepResult> {
    const result: SweepResult = { removed: 0, kept: 0 };
    const cutoff = this.clock.now().getTime() - this.options.graceMs;
    let after: number[] | undefined;
    for (;;) {
      const batch = await this.store.uploads.list({ where: { state: 'pending' }, after, limit: BATCH });
      for (const upload of batch) {
        if (upload.started_at > cutoff) continue;
        if (await this.resolve(upload)) result.removed++;
        else result.kept++;
      }
      if (batch.length < BATCH) return result;
      after = [batch[batch.length - 1].id];
    }
  }

  /** true when the blob was deleted (no expense refers to it), false when its expense keeps it. */
  private async resolve(upload: PendingUploadRecord): Promise<boolean> {
    const at = this.clock.now().toISOString();
    let orphan = true;
    try {
      await this.store.expenses.insert(placeholder(upload, at));
    } catch (err) {
      if (!(err instanceof DuplicateId)) throw err;
      const expense = await this.store.expenses.get(upload.id);
      orphan = expense?.file?.blob_key !== upload.blob_key;
    }
    if (orphan) await this.blobs.delete(upload.blob_key);
    const state: PendingUploadRecord['state'] = orphan ? 'swept' : 'done';
    await mutate(this.store.uploads, upload.id, (u) => (u.state === 'pending' ? { ...u, state } : null));
    return orphan;
  }
}

