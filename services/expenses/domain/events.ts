// The events of expenses a tenant sees (docs/events.md): appended to the expense's outbox by the very
// write that makes the change, each carrying the expense as that write leaves it. Published on
// invoicing.expenses.v1 next to the extraction jobs; the events log turns expenses.expense.<action> into
// the tenant's expense.<action>. A worker's claim of a job (extraction_status processing) is progress,
// not an event; its outcome is (extraction_completed / extraction_failed).
import { randomUUID } from 'node:crypto';
import { appendWithSnapshot, OutboxEntry } from '../../shared/outbox/entries';
import { ExpenseRecord } from '../ports/expenses-store';

export type ExpenseEventAction = 'created' | 'updated' | 'deleted' | 'extraction_completed' | 'extraction_failed';

export function withExpenseEvent<T extends Omit<ExpenseRecord, 'version'>>(record: T, action: ExpenseEventAction, at: string): T {
  const entry: Omit<OutboxEntry, 'seq'> = { id: randomUUID(), type: `expenses.expense.${action}`, occurred_at: at, payload: {} };
  return appendWithSnapshot(record, [entry]);
}
