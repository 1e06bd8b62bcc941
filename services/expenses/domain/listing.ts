// How expenses are listed (spec §4): issue_date descending then id descending, keyset-paginated on
// exactly that order; `search` over receipt identifiers, supplier names and the note; a set of
// extraction statuses. Pure: the store port does the reading.
import { Keyset } from '../../shared/pagination';
import { Tenant, tenantKey } from '../../shared/tenant';
import { ExpenseRecord, ExtractionStatus, EXTRACTION_STATUSES } from '../ports/expenses-store';

/**
 * The sort key of an expense without an issue date. It sorts above every date (years stop at 2999), so
 * undated expenses come FIRST in the descending order — as NULLS FIRST in SQL's DESC — which keeps an
 * upload still waiting for extraction at the top of the list. Ties (same date) are ordered by id.
 */
export const NO_ISSUE_DATE = '9999-99-99';

export const sortDateOf = (issueDate: string | null): string => issueDate ?? NO_ISSUE_DATE;

/** The most characters of `search` (after folding) a query may have. */
export const MAX_SEARCH_LENGTH = 200;

/**
 * Folds text for matching: Unicode compatibility forms, diacritics removed ("Příbram" matches
 * "pribram"), lower case, every run of whitespace one space, trimmed. Applied to the stored text and
 * to the query alike, so the match is a plain substring test the store can run.
 */
export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\s+/gu, ' ')
    .trim();
}

/**
 * What `search` looks in: document number, variable symbol, the linked contact's name, the printed
 * supplier name and the note, one field per line — a query (which has no line breaks after folding)
 * never matches across two fields.
 */
export function searchTextOf(r: Pick<ExpenseRecord, 'document_number' | 'variable_symbol' | 'supplier_contact_name' | 'supplier' | 'note'>): string {
  return [r.document_number, r.variable_symbol, r.supplier_contact_name, r.supplier?.name ?? null, r.note]
    .filter((v): v is string => v !== null && v !== '')
    .map(foldText)
    .join('\n');
}

export interface ListFilters {
  /** Folded; empty: no text filter. */
  search: string;
  /** Distinct, in EXTRACTION_STATUSES order; empty: every status. */
  statuses: ExtractionStatus[];
}

export function normaliseFilters(search: string, statuses: ExtractionStatus[]): ListFilters {
  return { search: foldText(search), statuses: EXTRACTION_STATUSES.filter((s) => statuses.includes(s)) };
}

/** Binds a cursor to the list and its filters (CursorCodec refuses it with other filters). */
export const filterKeyOf = (tenant: Tenant, f: ListFilters): string =>
  `expenses|${tenantKey(tenant)}|search=${f.search}|status=${f.statuses.join(',')}`;

export const keysetOf = (r: Pick<ExpenseRecord, 'sort_date' | 'id'>): Keyset => [r.sort_date, r.id];

/** The list order: sort_date descending, then id descending. */
export function compareListOrder(a: Pick<ExpenseRecord, 'sort_date' | 'id'>, b: Pick<ExpenseRecord, 'sort_date' | 'id'>): number {
  if (a.sort_date !== b.sort_date) return a.sort_date < b.sort_date ? 1 : -1;
  return b.id - a.id;
}

/**
 * The first `limit` rows of the union of several lists, each already in list order and each holding
 * its own first `limit` rows after the same keyset: the rows of a status set, read one status at a
 * time (the store filters by equality only).
 */
export function mergeInOrder<T extends Pick<ExpenseRecord, 'sort_date' | 'id'>>(lists: T[][], limit: number): T[] {
  return lists.flat().sort(compareListOrder).slice(0, limit);
}
