import { CREATION_KEY_INDEX, creationUniqueKeys } from '../../shared/idempotency';
import { DocumentStore } from '../../shared/store/port';
import { ExpenseRecord, ExpensesStore } from '../ports/expenses-store';

export function expensesStore(store: DocumentStore): ExpensesStore {
  return {
    expenses: store.collection<ExpenseRecord>({
      name: 'expenses',
      // One expense per Idempotency-Key that created one (services/shared/idempotency.ts).
      uniqueKeys: (e) => creationUniqueKeys(e),
      indexes: [['account_id', 'livemode', 'deleted', 'sort_date'], ['account_id', 'livemode', 'deleted', 'extraction_status', 'sort_date'], CREATION_KEY_INDEX],
    }),
    nextId: (sequence) => store.nextId(sequence),
  };
}
