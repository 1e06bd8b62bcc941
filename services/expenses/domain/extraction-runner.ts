// Runs extraction jobs (docs/expenses.md "Extraction"): claims a due job by compare-and-set (a lease
// longer than the job's time limit), reads the file, calls the Extractor port under that time limit,
// links or creates the supplier, and writes the result — or the failure and its reason — only if the
// claim still owns the job. Jobs are found in the store (pending, or processing with a lapsed lease), so
// a job whose process died is taken again; the bus event only wakes a worker early.
import { withExpenseEvent } from './events';
import { mutate } from '../../shared/store/port';
import { Tenant } from '../../shared/tenant';
import { ExpenseItemData, ExpenseRecord, ExpensesStore, storedConfidence } from '../ports/expenses-store';
import { ExtractedFields, ExtractionFailure, ExtractionResult, Extractor } from '../ports/extractor';
import { BlobStore } from '../../shared/blobs/port';
import { Clock } from '../ports/suppliers';
import { Claim, claimed, completed, failed, FailureReason, isDue, unfinished } from './extraction-job';
import { searchTextOf, sortDateOf } from './listing';

export interface SupplierMatcher {
  /** A contact of the workspace whose legal entity has this registration or VAT id, else one created with it; null when the fields name no supplier. */
  match(tenant: Tenant, supplier: ExtractedFields['supplier'], jobId: string): Promise<{ id: number; name: string } | null>;
}

export interface RunnerOptions {
  /** Time limit of one job (EXTRACTION_JOB_TIMEOUT_MS). */
  timeLimitMs: number;
  /** The claim's lease: longer than the time limit, so a live worker never loses its claim. */
  leaseMs: number;
}

/** Test-only latches between the steps of a job (crash and interleaving tests). */
export interface RunnerHooks {
  afterClaim?(expenseId: number, claim: Claim): Promise<void>;
  beforeWrite?(expenseId: number, claim: Claim): Promise<void>;
}

export type JobOutcome = 'completed' | 'failed' | 'superseded' | 'not_due';

const DUE_STATUSES = ['pending', 'processing'] as const;

export class ExtractionRunner {
  constructor(
    private readonly store: ExpensesStore,
    private readonly blobs: BlobStore,
    private readonly extractor: Extractor,
    private readonly suppliers: SupplierMatcher,
    private readonly clock: Clock,
    private readonly options: RunnerOptions,
    private readonly hooks: RunnerHooks = {},
  ) {}

  /** The ids and job ids of due jobs, oldest first (the recovery scan and the poll). */
  async dueJobs(limit = 100): Promise<Array<{ expenseId: number; jobId: string }>> {
    const now = this.clock.now();
    const rows = (await Promise.all(DUE_STATUSES.map((status) => this.store.expenses.list({ where: { extraction_status: status }, limit })))).flat();
    return rows
      .filter((r) => r.deleted === null && isDue(r, now))
      .sort((a, b) => a.id - b.id)
      .map((r) => ({ expenseId: r.id, jobId: r.job_id! }));
  }

  /** One attempt at job `jobId` of expense `expenseId`, if it is still due. */
  async run(expenseId: number, jobId: string): Promise<JobOutcome> {
    let claim: Claim | null = null;
    const taken = await mutate(this.store.expenses, expenseId, (doc) => {
      claim = null;
      const next = claimed(doc, jobId, this.options.leaseMs, this.clock.now());
      if (!next) return null;
      claim = next.claim;
      // No claim: the job is given up (too many attempts or sandbox kills) by this very write.
      return next.claim ? next.state : withOutcomeEvent(next.state);
    });
    if (!taken) return 'not_due';
    if (!claim) return taken.extraction_status === 'failed' && taken.job_id === jobId ? 'failed' : 'not_due';
    const mine: Claim = claim;
    await this.hooks.afterClaim?.(expenseId, mine);
    let outcome: { result: ExtractionResult; supplier: { id: number; name: string } | null } | { reason: FailureReason; message: string };
    try {
      const result = await this.extract(taken);
      const supplier = await this.suppliers.match(taken, result.fields.supplier, jobId);
      outcome = { result, supplier };
    } catch (err) {
      if (!(err instanceof ExtractionFailure)) {
        // Transient (store, blobs, contacts): the lease lapses, the job is taken again. Not the file's doing,
        // so the claim's presumed sandbox kill is taken back (best effort: if this write fails too, it counts).
        await mutate(this.store.expenses, expenseId, (doc) => unfinished(doc, mine)).catch(() => undefined);
        throw err;
      }
      outcome = { reason: err.reason, message: err.message };
    }
    await this.hooks.beforeWrite?.(expenseId, mine);
    let wrote: JobOutcome = 'superseded';
    await mutate(this.store.expenses, expenseId, (doc) => {
      const now = this.clock.now();
      wrote = 'superseded';
      if ('reason' in outcome) {
        const next = failed(doc, mine, outcome.reason, outcome.message, now);
        if (next) wrote = 'failed';
        // A failure that will be tried again (back to pending) is not the job's outcome yet.
        return next && withOutcomeEvent({ ...next, updated_at: now.toISOString() });
      }
      const next = completed(doc, mine, now);
      if (!next) return null;
      wrote = 'completed';
      return withOutcomeEvent({ ...withExtracted(next, outcome.result, outcome.supplier), updated_at: now.toISOString() });
    });
    return wrote;
  }

  private async extract(record: ExpenseRecord): Promise<ExtractionResult> {
    const file = record.file;
    if (!file) throw new ExtractionFailure('unreadable', 'the expense has no file');
    const blob = await this.blobs.get(file.blob_key);
    if (!blob) throw new ExtractionFailure('unreadable', 'the expense file is missing from the store');
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const limit = this.options.timeLimitMs;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new ExtractionFailure('timeout', `the extraction took longer than ${Math.round(limit / 1000)} s`));
      }, limit);
    });
    try {
      return await Promise.race([
        this.extractor.extract({ bytes: blob.data, contentType: file.content_type, tier: record.extraction_job?.tier ?? 'standard', signal: controller.signal }),
        timeout,
      ]);
    } catch (err) {
      if (err instanceof ExtractionFailure) throw err;
      // The extractor is meant to fail only with ExtractionFailure; anything else from it is a file it cannot read.
      throw new ExtractionFailure('unreadable', err instanceof Error ? err.message : String(err));
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The expense with what a completed job read written into its fields (fields the job could not read keep their value). */
export function withExtracted(record: ExpenseRecord, result: ExtractionResult, supplier: { id: number; name: string } | null): ExpenseRecord {
  const f = result.fields;
  const pick = <T>(read: T | null, current: T | null): T | null => (read === null || read === undefined ? current : read);
  const items: ExpenseItemData[] = f.line_items.length
    ? f.line_items.map((line, index) => ({
        id: index + 1,
        name: line.name,
        quantity: line.quantity ?? '1',
        unit_price: line.unit_price ?? line.total ?? '0',
        vat_rate: f.vat_breakdown.length === 1 ? f.vat_breakdown[0].rate : '0',
        discount: '0',
        net_amount: line.total ?? line.unit_price ?? '0',
      }))
    : record.items;
  const next: ExpenseRecord = {
    ...record,
    supplier: f.supplier,
    supplier_id: supplier?.id ?? record.supplier_id,
    supplier_contact_name: supplier?.name ?? record.supplier_contact_name,
    document_number: pick(f.document_number, record.document_number),
    variable_symbol: pick(f.variable_symbol, record.variable_symbol),
    issue_date: pick(f.issue_date, record.issue_date),
    due_date: pick(f.due_date, record.due_date),
    currency: pick(f.currency, record.currency),
    iban: pick(f.iban, record.iban),
    bic: pick(f.bic, record.bic),
    items,
    next_item_id: Math.max(record.next_item_id, items.length + 1),
    totals: {
      subtotal: pick(f.subtotal, record.totals.subtotal),
      vat_total: pick(f.vat_total, record.totals.vat_total),
      total: pick(f.total, record.totals.total),
      vat_breakdown: f.vat_breakdown.length ? f.vat_breakdown.map((v) => ({ vat_rate: v.rate, base: v.base, vat: v.vat })) : record.totals.vat_breakdown,
    },
    confidence: storedConfidence(result.confidence),
  };
  return { ...next, sort_date: sortDateOf(next.issue_date), search_text: searchTextOf(next) };
}

/** The extraction_completed / extraction_failed event of a write that settles the job, in that write. */
function withOutcomeEvent(doc: ExpenseRecord): ExpenseRecord {
  if (doc.extraction_status === 'completed') return withExpenseEvent(doc, 'extraction_completed', doc.updated_at);
  if (doc.extraction_status === 'failed') return withExpenseEvent(doc, 'extraction_failed', doc.updated_at);
  return doc;
}
