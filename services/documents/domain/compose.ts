// Builds the stored fields of a document from its input: validation, defaults (on create), lookups of
// the purchaser, bank account and source invoice, and the totals. Shared by create, update and the
// conversions.
import { fail } from '../../shared/errors';
import { ownedBy, Tenant } from '../../shared/tenant';
import { DocType, DocumentRecord, PartyData } from '../ports/documents-store';
import { DocumentsContext } from './context';
import { addDays, currency as parseCurrency, date, DocumentInput, exchangeRate, lineItems, locale, text, variableSymbol } from './fields';
import { Decimal } from '../../shared/money';
import { ResolvedSettings } from './settings';
import { invoiceTitle } from './send';
import { computeTotals, repriceLines } from '../../shared/totals';
import { fullCreditLines } from './totals';

/** The fields compose() decides; the rest of a record (status, number, links, outbox…) is the caller's. */
export type ComposedFields = Pick<
  DocumentRecord,
  | 'purchaser_id'
  | 'purchaser'
  | 'issue_date'
  | 'due_date'
  | 'delivery_date'
  | 'currency'
  | 'exchange_rate'
  | 'pdf_language'
  | 'variable_symbol'
  | 'bank_account_id'
  | 'bank_account'
  | 'note'
  | 'line_items'
  | 'totals'
  | 'invoice_id'
  | 'paid_on'
  | 'buyer_reference'
  | 'order_reference'
  | 'contract_reference'
  | 'accounting_currency'
>;

/** The buyer's references an invoice carries to its e-invoice (BT-10, BT-13, BT-12). */
type ReferenceField = 'buyer_reference' | 'order_reference' | 'contract_reference';
/** EN 16931 sets no length; 200 holds any Leitweg-ID or order number with room to spare. */
export const MAX_REFERENCE_LENGTH = 200;

/** Default payment term of invoices and proformas. */
export const DUE_DAYS = 14;

const has = <K extends keyof DocumentInput>(input: DocumentInput, key: K) => input[key] !== undefined;

export function defaultDates(type: DocType, issueDate: string): { due_date: string | null; delivery_date: string | null } {
  return {
    due_date: type === 'invoice' || type === 'proforma' ? addDays(issueDate, DUE_DAYS) : null,
    delivery_date: type === 'invoice' || type === 'credit_note' ? issueDate : null,
  };
}

/**
 * Applies `input` over `current` (null on create, when defaults fill what the input leaves out).
 * `settings` are the workspace's effective settings (currency, locale).
 */
export async function compose(
  ctx: DocumentsContext,
  tenant: Tenant,
  type: DocType,
  current: DocumentRecord | null,
  input: DocumentInput,
  settings: ResolvedSettings,
): Promise<ComposedFields> {
  // Credit notes: the source invoice lends purchaser, currency, rate and (on create) its lines.
  let invoiceId = input.invoice_id !== undefined ? input.invoice_id : (current?.invoice_id ?? null);
  let source: DocumentRecord | null = null;
  const needsSource = !current || has(input, 'invoice_id') || has(input, 'currency');
  if (type === 'credit_note' && invoiceId && needsSource) {
    source = await ctx.store.documents.get(invoiceId);
    if (!source || !ownedBy(source, tenant) || source.type !== 'invoice' || source.deleted !== null) {
      throw fail.invalid('invoice_not_found', 'invoice_id does not name an invoice of this workspace', 'invoice_id');
    }
    if (source.status === 'draft') throw fail.invalid('invoice_not_issued', 'a credit note can only correct an issued invoice', 'invoice_id');
  } else if (type !== 'credit_note') {
    invoiceId = null;
  }

  // Purchaser: a legal entity visible to the tenant (not a contact id).
  let purchaserId = input.purchaser_id !== undefined ? input.purchaser_id : (current?.purchaser_id ?? source?.purchaser_id ?? null);
  let purchaser: PartyData | null = current?.purchaser ?? null;
  if (!purchaserId) throw fail.invalid('missing_field', 'purchaser_id is required (a legal-entity id)', 'purchaser_id');
  if (!current || purchaserId !== current.purchaser_id || has(input, 'purchaser_id')) {
    if (source && purchaserId === source.purchaser_id && !has(input, 'purchaser_id')) {
      purchaser = source.purchaser;
    } else {
      purchaser = await ctx.directory.purchaser(tenant, purchaserId);
      if (!purchaser) throw fail.invalid('purchaser_not_found', 'purchaser_id does not name a legal entity of this workspace', 'purchaser_id');
    }
    purchaserId = purchaser?.id ?? purchaserId;
  }

  // Currency and exchange rate (1 for the workspace currency, required otherwise).
  const currency = has(input, 'currency') && input.currency ? parseCurrency(input.currency) : (current?.currency ?? source?.currency ?? settings.currency);
  if (source && currency !== source.currency) {
    throw fail.invalid('currency_mismatch', `a credit note has the currency of its invoice (${source.currency})`, 'currency');
  }
  let rate: string | null = current?.exchange_rate ?? null;
  if (!current || has(input, 'currency') || has(input, 'exchange_rate')) {
    const given = has(input, 'exchange_rate') && input.exchange_rate ? exchangeRate(input.exchange_rate) : null;
    if (currency === settings.currency) {
      if (given !== null && !new Decimal(given).equals(1)) {
        throw fail.invalid('exchange_rate_not_applicable', `${currency} is the workspace currency: its exchange rate is 1`, 'exchange_rate');
      }
      rate = '1';
    } else {
      rate = given ?? (current?.currency === currency ? current.exchange_rate : null) ?? (source?.currency === currency ? source.exchange_rate : null);
      if (rate === null || (given === null && current?.currency !== currency && source?.currency !== currency)) {
        throw fail.invalid('exchange_rate_required', `exchange_rate is required for ${currency} (the workspace currency is ${settings.currency})`, 'exchange_rate');
      }
    }
  }

  // Dates.
  const issueDate = has(input, 'issue_date') && input.issue_date ? date(input.issue_date, 'issue_date') : (current?.issue_date ?? ctx.today());
  const defaults = defaultDates(type, issueDate);
  const dateOr = (key: 'due_date' | 'delivery_date' | 'paid_on', fallback: string | null) => {
    if (!has(input, key)) return current ? current[key] : fallback;
    return input[key] ? date(input[key] as string, key) : null;
  };
  const dueDate = dateOr('due_date', defaults.due_date);
  const deliveryDate = dateOr('delivery_date', defaults.delivery_date);
  const paidOn = type === 'invoice' || type === 'proforma' ? dateOr('paid_on', null) : null;
  // A paid document (or a proforma converted after payment) keeps its payment date: clearing it would
  // leave "paid" without a date, and the invoice converted from a paid proforma carries that date.
  if (current?.paid_on && paidOn === null && (current.status === 'paid' || current.status === 'converted')) {
    throw fail.invalid('paid_on_required', 'a paid document keeps its payment date: paid_on cannot be cleared', 'paid_on');
  }
  if (dueDate && dueDate < issueDate) throw fail.invalid('due_date_before_issue_date', 'due_date is before issue_date', 'due_date');

  // Bank account: a bank account or cash register of the workspace, snapshotted.
  let bankAccountId = current?.bank_account_id ?? null;
  let bankAccount = current?.bank_account ?? null;
  if (has(input, 'bank_account_id')) {
    bankAccountId = input.bank_account_id || null;
    bankAccount = bankAccountId ? await ctx.directory.bankAccount(tenant, bankAccountId) : null;
    if (bankAccountId && !bankAccount) {
      throw fail.invalid('bank_account_not_found', 'bank_account_id does not name a bank account of this workspace', 'bank_account_id');
    }
  }

  const optionalText = (key: 'note' | 'variable_symbol' | ReferenceField, parse: (v: string) => string) => {
    if (!has(input, key)) return current ? (current[key] ?? null) : null;
    const value = input[key];
    return value && value.trim() ? parse(value) : null;
  };
  // Invoices only: the API offers them on invoices alone; another type never has them.
  const reference = (key: ReferenceField) =>
    type === 'invoice' ? optionalText(key, (v) => text(v, key, MAX_REFERENCE_LENGTH)) : null;

  // Lines: given, else kept (re-priced when the currency changed), else a credit note copies its invoice.
  let lines = current?.line_items ?? [];
  if (input.line_items !== undefined) lines = lineItems(input.line_items, currency, type);
  else if (current && current.currency !== currency) lines = repriceLines(lines, currency);
  else if (!current && source) lines = fullCreditLines(source, invoiceTitle(source.pdf_language, source.number ?? ''));
  const totals = computeTotals(lines, currency);
  if (new Decimal(totals.total).isNegative()) throw fail.invalid('negative_total', 'the document total cannot be negative', 'line_items');

  return {
    purchaser_id: purchaserId,
    purchaser,
    issue_date: issueDate,
    due_date: dueDate,
    delivery_date: deliveryDate,
    currency,
    exchange_rate: rate ?? '1',
    pdf_language: has(input, 'pdf_language') && input.pdf_language ? locale(input.pdf_language, 'pdf_language') : (current?.pdf_language ?? settings.locale),
    variable_symbol: optionalText('variable_symbol', (v) => variableSymbol(v)),
    bank_account_id: bankAccountId,
    bank_account: bankAccount,
    note: optionalText('note', (v) => text(v, 'note', 5000)),
    line_items: lines,
    totals,
    invoice_id: invoiceId,
    paid_on: paidOn,
    accounting_currency: currency === settings.currency ? null : settings.currency,
    buyer_reference: reference('buyer_reference'),
    order_reference: reference('order_reference'),
    contract_reference: reference('contract_reference'),
  };
}
