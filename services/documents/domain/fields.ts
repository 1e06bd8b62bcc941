// Validation and normalisation of the writable fields of a document (422 with the offending field).
import { fail } from '../../shared/errors';
import { boundedText as text, normalizeCurrency } from '../../shared/validation';
import { DocType, LineItemData } from '../ports/documents-store';
import { parseDecimal } from '../../shared/money';
import { pricedLine } from '../../shared/totals';

/** Languages of PDFs and e-mails (pdf_language, send locale). */
export const LOCALES = ['en', 'cs', 'sk', 'de'] as const;
export type Locale = (typeof LOCALES)[number];

export const MAX_LINE_ITEMS = 500;

export interface LineItemInput {
  name: string;
  description?: string;
  /** Decimal strings; omitted or empty: quantity 1, vat_rate 0, discount 0. */
  quantity?: string;
  unit?: string;
  unit_price: string;
  vat_rate?: string;
  discount?: string;
}

/** Writable fields. `undefined` leaves a field as it is (its default on create); `null` clears it. */
export interface DocumentInput {
  purchaser_id?: number | null;
  issue_date?: string | null;
  due_date?: string | null;
  delivery_date?: string | null;
  currency?: string | null;
  exchange_rate?: string | null;
  pdf_language?: string | null;
  variable_symbol?: string | null;
  bank_account_id?: number | null;
  note?: string | null;
  line_items?: LineItemInput[];
  invoice_id?: number | null;
  paid_on?: string | null;
  /** Invoices only (e-invoice BT-10, BT-13, BT-12). */
  buyer_reference?: string | null;
  order_reference?: string | null;
  contract_reference?: string | null;
}

// Shared with the expenses service (services/shared/validation.ts).
export { boundedText as text, calendarDate as date } from '../../shared/validation';

export function addDays(isoDate: string, days: number): string {
  const d = new Date(`${isoDate}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/**
 * ISO 4217 codes that are not money a document can be priced in: precious metals, IMF/SDR and bond-
 * market units, funds (accounting units), the testing code and "no currency".
 */
const NOT_TRADING_CURRENCIES = new Set([
  'XAU', 'XAG', 'XPT', 'XPD', 'XDR', 'XSU', 'XUA', 'XBA', 'XBB', 'XBC', 'XBD', 'XTS', 'XXX',
  'BOV', 'CHE', 'CHW', 'CLF', 'COU', 'MXV', 'USN', 'UYI', 'UYW',
]);

export function currency(value: string, field = 'currency'): string {
  const code = normalizeCurrency(value, field);
  if (NOT_TRADING_CURRENCIES.has(code)) {
    throw fail.invalid('invalid_currency', `${field}: ${code} is not a currency documents can be issued in (a metal, fund or testing code)`, field);
  }
  return code;
}

export function exchangeRate(value: string, field = 'exchange_rate'): string {
  return parseDecimal(value, field, { scale: 6, integerDigits: 9, above: '0' }).toFixed();
}

export function locale(value: string, field: string): Locale {
  const code = value.trim().toLowerCase();
  if (!(LOCALES as readonly string[]).includes(code)) {
    throw fail.invalid('invalid_locale', `${field} must be one of ${LOCALES.join(', ')}`, field);
  }
  return code as Locale;
}

export function variableSymbol(value: string, field = 'variable_symbol'): string {
  const symbol = value.trim();
  if (!/^[0-9A-Za-z/-]{1,35}$/.test(symbol)) {
    throw fail.invalid('invalid_variable_symbol', `${field} must be 1 to 35 letters, digits, / or -`, field);
  }
  return symbol;
}

/** Parses and prices line items in `currencyCode`. Credit-note lines are entered as positive amounts. */
export function lineItems(items: LineItemInput[], currencyCode: string, type: DocType): LineItemData[] {
  if (items.length > MAX_LINE_ITEMS) throw fail.invalid('too_many_line_items', `at most ${MAX_LINE_ITEMS} line items`, 'line_items');
  return items.map((item, i) => {
    const f = (name: string) => `line_items[${i}].${name}`;
    const name = text(item.name ?? '', f('name'), 255);
    if (!name) throw fail.invalid('missing_field', `${f('name')} is required`, f('name'));
    if (item.unit_price === undefined || item.unit_price === '') throw fail.invalid('missing_field', `${f('unit_price')} is required`, f('unit_price'));
    const or = (value: string | undefined, fallback: string) => (value === undefined || value === '' ? fallback : value);
    return pricedLine(
      { name, description: text(item.description ?? '', f('description'), 2000), unit: text(item.unit ?? '', f('unit'), 20) },
      {
        quantity: parseDecimal(or(item.quantity, '1'), f('quantity'), { scale: 6, integerDigits: 9, above: '0' }),
        unit_price: parseDecimal(item.unit_price, f('unit_price'), { scale: 6, min: type === 'credit_note' ? '0' : undefined }),
        vat_rate: parseDecimal(or(item.vat_rate, '0'), f('vat_rate'), { scale: 2, integerDigits: 2, min: '0' }),
        discount: parseDecimal(or(item.discount, '0'), f('discount'), { scale: 4, integerDigits: 3, min: '0', max: '100' }),
      },
      currencyCode,
    );
  });
}
