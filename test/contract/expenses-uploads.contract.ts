// The expenses service's upload ledger and sweeper (services/expenses/domain/upload-sweeper.ts) against
// every store and blob adapter: a process that dies between the file's blob write and the expense's
// insert leaves a blob the sweeper removes after the grace period; an upload still in flight keeps its
// blob through any sweep, and an in-flight upload given up by the sweeper can no longer write its
// expense (so the sweeper never deletes a blob an expense will refer to). Steps are held by hooks and
// the clock is the test's; nothing waits on time.
import { randomInt } from 'node:crypto';
import { expensesStore } from '../../services/expenses/adapters/expenses-store';
import { fileInspector } from '../../services/expenses/adapters/file-inspector';
import { ExpenseFiles, ExpenseFilesHooks } from '../../services/expenses/domain/expense-files';
import { ExtractionQuota, quotaCountersSpec } from '../../services/expenses/domain/extraction-quota';
import { UploadSweeper } from '../../services/expenses/domain/upload-sweeper';
import { ExpensesStore } from '../../services/expenses/ports/expenses-store';
import { BlobStore } from '../../services/shared/blobs/port';
import { DocumentStore } from '../../services/shared/store/port';
import { Tenant } from '../../services/shared/tenant';
import { pdfFile } from '../support/expense-files';

const GRACE_MS = 60_000;

async function* chunks(file: Buffer) {
  for (let at = 0; at < file.length; at += 4096) yield file.subarray(at, at + 4096);
}

/** Holds the first caller until release(); `reached` resolves when it arrived. */
function latch() {
  let release!: () => void;
  let arrived!: (value: { expenseId: number; blobKey: string }) => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<{ expenseId: number; blobKey: string }>((resolve) => (arrived = resolve));
  return {
    hook: async (expenseId: number, blobKey: string) => {
      arrived({ expenseId, blobKey });
      await open;
    },
    reached,
    release: () => release(),
  };
}

export function describeUploadSweepContract(adapter: string, open: () => Promise<{ documents: DocumentStore; blobs: BlobStore }>): void {
  describe(`abandoned uploads are swept, in-flight ones never: ${adapter}`, () => {
    let documents: DocumentStore;
    let blobs: BlobStore;
    let store: ExpensesStore;
    let quota: ExtractionQuota;
    const clock = { t: Date.parse('2026-11-23T10:00:00Z'), now: () => new Date(clock.t) };
    // Every test its own workspace, so runs against a shared database never see each other.
    const freshTenant = (): Tenant => ({ account_id: randomInt(1, 2 ** 40), livemode: true });

    beforeAll(async () => {
      ({ documents, blobs } = await open());
      store = expensesStore(documents);
      quota = new ExtractionQuota(documents.collection(quotaCountersSpec), () => documents.nextId('quota'));
    });
    afterAll(() => documents?.close());

    const files = (hooks: ExpenseFilesHooks = {}) => new ExpenseFiles(store, blobs, fileInspector, quota, clock, { retryCooldownMs: 0 }, hooks);
    const sweeper = () => new UploadSweeper(store, blobs, clock, { graceMs: GRACE_MS });
    const upload = async (f: ExpenseFiles, tenant: Tenant) =>
      f.upload({ tenant, filename: 'invoice.pdf', declaredType: 'application/pdf', allowance: 10 }, chunks(await pdfFile()));

    it('a process dying after the blob write: the blob stays through the grace period, then the sweep removes it', async () => {
      const tenant = freshTenant();
      const held = latch(); // never released: the process "died" here
      void upload(files({ afterBlobWrite: held.hook }), tenant).catch(() => undefined);
      const { expenseId, blobKey } = await held.reached;
      expect(await blobs.get(blobKey)).not.toBeNull();

      expect((await sweeper().sweep()).removed).toBe(0); // within the grace period
      expect(await blobs.get(blobKey)).not.toBeNull();

      clock.t += GRACE_MS + 1;
      const swept = await sweeper().sweep();
      expect(swept.removed).toBeGreaterThanOrEqual(1);
      expect(await blobs.get(blobKey)).toBeNull();
      expect((await store.uploads.get(expenseId))?.state).toBe('swept');
      // The id is claimed by a deleted placeholder: nothing lists or reads it.
      expect((await store.expenses.get(expenseId))?.deleted).not.toBeNull();
      expect(await store.expenses.count({ account_id: tenant.account_id, livemode: true, deleted: null })).toBe(0);
      expect((await sweeper().sweep()).removed).toBe(0); // settled: not looked at again
    });

    it('an upload in flight (held between blob write and insert) keeps its blob through a sweep and completes', async () => {
      const tenant = freshTenant();
      const held = latch();
      const pending = upload(files({ afterBlobWrite: held.hook }), tenant);
      const { expenseId, blobKey } = await held.reached;
      await sweeper().sweep();
      expect(await blobs.get(blobKey)).not.toBeNull();
      held.release();
      const expense = await pending;
      expect(expense.id).toBe(expenseId);
      expect(expense.file?.blob_key).toBe(blobKey);
      expect((await store.uploads.get(expenseId))?.state).toBe('done');
      clock.t += GRACE_MS + 1;
      await sweeper().sweep();
      expect(await blobs.get(blobKey)).not.toBeNull();
    });

    it('an upload in flight past the grace period is given up: its late insert fails (503 upload_abandoned), no expense, no blob', async () => {
      const tenant = freshTenant();
      const held = latch();
      const pending = upload(files({ afterBlobWrite: held.hook }), tenant);
      const { expenseId, blobKey } = await held.reached;
      clock.t += GRACE_MS + 1;
      await sweeper().sweep();
      expect(await blobs.get(blobKey)).toBeNull();
      held.release();
      await expect(pending).rejects.toMatchObject({ code: 'upload_abandoned', kind: 'unavailable' });
      expect(await store.expenses.count({ account_id: tenant.account_id, livemode: true, deleted: null })).toBe(0);
      expect((await store.expenses.get(expenseId))?.file).toBeNull();
    });

    it('an upload whose expense was written but whose record was not settled: the sweep keeps the blob', async () => {
      const tenant = freshTenant();
      const expense = await upload(files(), tenant);
      // As if the process died right after the insert, before settling its record.
      const record = (await store.uploads.get(expense.id))!;
      await store.uploads.update({ ...record, state: 'pending' });
      clock.t += GRACE_MS + 1;
      const swept = await sweeper().sweep();
      expect(swept.kept).toBeGreaterThanOrEqual(1);
      expect(await blobs.get(expense.file!.blob_key)).not.toBeNull();
      expect((await store.uploads.get(expense.id))?.state).toBe('done');
      expect((await store.expenses.get(expense.id))?.deleted).toBeNull();
    });

    it('two sweepers at once: each abandoned upload is claimed once, its blob removed', async () => {
      const tenant = freshTenant();
      const held = latch();
      void upload(files({ afterBlobWrite: held.hook }), tenant).catch(() => undefined);
      const { expenseId, blobKey } = await held.reached;
      clock.t += GRACE_MS + 1;
      await Promise.all([sweeper().sweep(), sweeper().sweep()]);
      expect(await blobs.get(blobKey)).toBeNull();
      expect((await store.uploads.get(expenseId))?.state).toBe('swept');
    });
  });
}
