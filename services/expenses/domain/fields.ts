// Validation of the writable fields of an expense and of its nested items (expense_items_attributes),
// priced with the money rules every service shares (services/shared/totals.ts). Pure.
import { fail } from '../../shared/errors';
import { parseDecimal } from '../../shared/money';
import { computeTotals, pricedLine, repriceLines } from '../../shared/totals';
import { boundedText, calendarDate, normalizeCurrency } from '../../shared/validation';
import { ExpenseItemData, ExpenseRecord, ExpenseTotals } from '../ports/expenses-store';

export const MAX_EXPENSE_ITEMS = 500;

/** One entry of expense_items_attributes: no id adds an item, an id updates it, `destroy` removes it. */
export interface ExpenseItemInput {
  id?: number;
  name?: string;
  quantity?: string;
  unit_price?: string;
  vat_rate?: string;
  destroy?: boolean;
}

/** Writable fields: `undefined` leaves a field as it is; `null` clears it. */
export interface ExpenseInput {
  issue_date?: string | null;
  due_date?: string | null;
  supplier_id?: number | null;
  document_number?: string | null;
  variable_symbol?: string | null;
  note?: string | null;
  currency?: string | null;
  items?: ExpenseItemInput[];
}

/** The fields an input decides (the supplier is resolved separately, through the contacts service). */
export type ComposedFields = Pick<
  ExpenseRecord,
  'issue_date' | 'due_date' | 'document_number' | 'variable_symbol' | 'note' | 'currency' | 'items' | 'next_item_id' | 'totals'
>;

export const NO_TOTALS: ExpenseTotals = { subtotal: null, vat_total: null, total: null, vat_breakdown: [] };

const F = 'expense';
const ITEMS = `${F}.expense_items_attributes`;

function optionalText(value: string | null | undefined, current: string | null, field: string, max: number): string | null {
  if (value === undefined) return current;
  if (value === null) return null;
  return boundedText(value, `${F}.${field}`, max) || null;
}

function optionalDate(value: string | null | undefined, current: string | null, field: string): string | null {
  if (value === undefined) return current;
  if (value === null || value.trim() === '') return null;
  return calendarDate(value, `${F}.${field}`);
}

const or = (value: string | undefined, fallback: string) => (value === undefined || value.trim() === '' ? fallback : value);

/** Parses one item (a new one, or an update over `current`) and prices it in `currency`. */
function item(input: ExpenseItemInput, current: ExpenseItemData | null, id: number, i: number, currency: string): ExpenseItemData {
  const f = (name: string) => `${ITEMS}[${i}].${name}`;
  const name = input.name !== undefined ? boundedText(input.name, f('name'), 255) : (current?.name ?? '');
  if (!name) throw fail.invalid('missing_field', `${f('name')} is required`, f('name'));
  const unitPrice = input.unit_price ?? current?.unit_price;
  if (unitPrice === undefined || unitPrice.trim() === '') throw fail.invalid('missing_field', `${f('unit_price')} is required`, f('unit_price'));
  return pricedLine(
    { id, name },
    {
      quantity: parseDecimal(or(input.quantity, current?.quantity ?? '1'), f('quantity'), { scale: 6, integerDigits: 9, above: '0' }),
      unit_price: parseDecimal(unitPrice, f('unit_price'), { scale: 6 }),
      vat_rate: parseDecimal(or(input.vat_rate, current?.vat_rate ?? '0'), f('vat_rate'), { scale: 2, integerDigits: 2, min: '0' }),
      discount: parseDecimal('0', f('discount'), { scale: 0 }),
    },
    currency,
  );
}

/**
 * Applies expense_items_attributes to the current items, Rails nested-attributes style: entries
 * without id are added (in order, with fresh ids), entries with an id update that item (only the
 * fields given), entries with an id and `destroy` remove it; items not named are kept. An id the
 * expense does not have → 422 unknown_expense_item; an id named twice → 422 duplicate_expense_item.
 */
function applyItems(current: ExpenseItemData[], nextId: number, inputs: ExpenseItemInput[], currency: string) {
  const named = new Set<number>();
  let items = current;
  let next = nextId;
  inputs.forEach((input, i) => {
    const id = input.id ?? 0;
    const field = `${ITEMS}[${i}].id`;
    if (id === 0) {
      if (input.destroy) throw fail.invalid('missing_field', `${field} is required to remove an item`, field);
      items = [...items, item(input, null, next, i, currency)];
      next += 1;
      return;
    }
    if (named.has(id)) throw fail.invalid('duplicate_expense_item', `${field}: item ${id} is named twice`, field);
    named.add(id);
    const existing = items.find((it) => it.id === id);
    if (!existing) throw fail.invalid('unknown_expense_item', `${field}: this expense has no item ${id}`, field);
    items = input.destroy ? items.filter((it) => it.id !== id) : items.map((it) => (it.id === id ? item(input, it, id, i, currency) : it));
  });
  if (items.length > MAX_EXPENSE_ITEMS) throw fail.invalid('too_many_line_items', `at most ${MAX_EXPENSE_ITEMS} items`, ITEMS);
  return { items, next_item_id: next };
}

/** Totals follow the items: computed from them when there are any; none once the last item is removed;
 * left as they are (what extraction read) while the items are untouched and empty. */
function totalsOf(items: ExpenseItemData[], currency: string | null, itemsChanged: boolean, current: ExpenseTotals): ExpenseTotals {
  if (items.length > 0 && currency) {
    const t = computeTotals(items, currency);
    return { subtotal: t.subtotal, vat_total: t.vat_total, total: t.total, vat_breakdown: t.vat_breakdown };
  }
  return itemsChanged ? NO_TOTALS : current;
}

/**
 * Whether `input` over `current` leaves an expense with items and no currency, the client having named
 * none: it then takes the workspace currency, as documents do (an explicit null or "" stays a 422).
 */
export function needsWorkspaceCurrency(current: Pick<ComposedFields, 'currency' | 'items'> | null, input: ExpenseInput): boolean {
  return input.currency === undefined && !current?.currency && ((input.items?.length ?? 0) > 0 || (current?.items.length ?? 0) > 0);
}

/**
 * The fields of `input` over `current` (null: a new expense), validated (422 naming the field).
 * `workspaceCurrency` is the currency taken when the expense would have items and no currency and the
 * client named none (see needsWorkspaceCurrency).
 */
export function composeFields(current: ComposedFields | null, input: ExpenseInput, workspaceCurrency?: string): ComposedFields {
  const base: ComposedFields = current ?? {
    issue_date: null, due_date: null, document_number: null, variable_symbol: null, note: null, currency: null,
    items: [], next_item_id: 1, totals: NO_TOTALS,
  };
  const named =
    input.currency === undefined ? base.currency : input.currency === null || input.currency.trim() === '' ? null : normalizeCurrency(input.currency, `${F}.currency`);
  const inputs = input.items ?? [];
  const currency = named === null && workspaceCurrency && needsWorkspaceCurrency(base, input) ? normalizeCurrency(workspaceCurrency, `${F}.currency`) : named;
  let items = base.items;
  if (currency !== null && currency !== base.currency && items.length > 0) items = repriceLines(items, currency);
  const applied = applyItems(items, base.next_item_id, inputs, currency ?? '');
  if (applied.items.length > 0 && currency === null) {
    throw fail.invalid('missing_field', `${F}.currency is required for an expense with items`, `${F}.currency`);
  }
  const itemsChanged = inputs.length > 0 || items !== base.items;
  return {
    issue_date: optionalDate(input.issue_date, base.issue_date, 'issue_date'),
    due_date: optionalDate(input.due_date, base.due_date, 'due_date'),
    document_number: optionalText(input.document_number, base.document_number, 'document_number', 100),
    variable_symbol: optionalText(input.variable_symbol, base.variable_symbol, 'variable_symbol', 35),
    note: optionalText(input.note, base.note, 'note', 2000),
    currency,
    items: applied.items,
    next_item_id: applied.next_item_id,
    totals: totalsOf(applied.items, currency, itemsChanged, base.totals),
  };
}
