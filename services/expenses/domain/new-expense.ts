// The one way a new expense record comes to be (a JSON create, an upload, the sweeper's placeholder): nothing
// read, no file, no supplier, no money — the caller sets what it knows — with the derived listing keys computed.
import { ExpenseRecord } from '../ports/expenses-store';
import { composeFields } from './fields';
import { searchTextOf, sortDateOf } from './listing';

/** The derived fields that follow the stored ones (list order, search). */
export function withDerived(r: ExpenseRecord): ExpenseRecord {
  return { ...r, sort_date: sortDateOf(r.issue_date), search_text: searchTextOf(r) };
}

type Owner = Pick<ExpenseRecord, 'id' | 'account_id' | 'livemode'>;

export function newExpense(owner: Owner, at: string, known: Partial<ExpenseRecord> = {}): ExpenseRecord {
  return withDerived({
    ...owner,
    version: 0,
    supplier_id: null,
    supplier_contact_name: null,
    supplier: null,
    ...composeFields(null, {}),
    iban: null,
    bic: null,
    extraction_status: 'manual',
    job_id: null,
    rejected_job_id: null,
    file: null,
    confidence: {},
    sort_date: '',
    search_text: '',
    created_at: at,
    updated_at: at,
    deleted: null,
    ...known,
  });
}
