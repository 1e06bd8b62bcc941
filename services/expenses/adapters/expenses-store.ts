import { CREATION_KEY_INDEX, creationUniqueKeys } from '../../shared/idempotency';
import { TOPICS } from '../../shared/bus/port';
import { OutboxSource } from '../../shared/outbox/relay';
import { Collection, DocumentStore } from '../../shared/store/port';
import { toExpenseMessage } from '../grpc/mapping';
import { ExpenseRecord, ExpensesStore, PendingUploadRecord } from '../ports/expenses-store';

export function expensesStore(store: DocumentStore): ExpensesStore {
  return {
    expenses: store.collection<ExpenseRecord>({
      name: 'expenses',
      // One expense per Idempotency-Key that created one (services/shared/idempotency.ts).
      uniqueKeys: (e) => creationUniqueKeys(e),
      indexes: [['outbox_pending', 'outbox_order'], ['extraction_status'], ['account_id', 'livemode', 'deleted', 'sort_date'], ['account_id', 'livemode', 'deleted', 'extraction_status', 'sort_date'], ['account_id', 'livemode', 'extraction_status', 'deleted', 'job_rank'], CREATION_KEY_INDEX],
      // `search` (spec §4): a substring of the folded numbers, supplier names and note.
      searchField: 'search_text',
    }),
    // The sweeper reads the pending ones (domain/upload-sweeper.ts).
    uploads: store.collection<PendingUploadRecord>({ name: 'expense_uploads', indexes: [['state']] }),
    nextId: (sequence) => store.nextId(sequence),
  };
}

/**
 * The expenses' outbox on the shared relay: extraction jobs and the tenant's expense events go to
 * invoicing.expenses.v1, keyed by workspace; an event's expense is mapped as GetExpense maps it.
 */
export function expensesOutbox(expenses: Collection<ExpenseRecord>): OutboxSource<ExpenseRecord> {
  return {
    name: 'expenses',
    collection: expenses,
    topic: TOPICS.expenses,
    envelope: (e) => ({ account_id: e.account_id, livemode: e.livemode }),
    resource: async (object) => ({ expense: toExpenseMessage(object as unknown as ExpenseRecord) }),
  };
}
