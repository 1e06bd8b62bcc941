// Amounts as printed on invoices and receipts in sk, cs, en and de, read into exact decimal strings.
// "1 234,50", "1.234,50", "1,234.50", "1'234.50", "1234.5", "-12,00", "12,-" all read; never floats.
import Decimal from 'decimal.js';

/** A number token: digits with optional group separators (space, no-break space, dot, comma, apostrophe)
 * and an optional decimal part. Greedy on groups of exactly three digits. */
const NUMBER_TOKEN = /(?<![\w.,])[-−]?\d{1,3}(?:(?:[ \u00a0\u202f]|[.,'’])\d{3})*(?:[.,]\d{1,2}|,-)?(?![\w])|(?<![\w.,])[-−]?\d+(?:[.,]\d{1,3})?(?![\w])/g;

export interface NumberToken {
  /** Exact decimal string, e.g. "1234.50" (as many decimals as printed). */
  value: string;
  raw: string;
  index: number;
  /** Printed with a decimal part of exactly two digits (how money is printed). */
  moneyLike: boolean;
}

/** Reads one printed number; null when it is not one. */
export function parseNumber(raw: string): string | null {
  let s = raw.trim().replace(/[−–]/g, '-').replace(/,-$/, '');
  const negative = s.startsWith('-');
  if (negative) s = s.slice(1).trim();
  s = s.replace(/[ \u00a0\u202f'’]/g, '');
  if (!/^\d[\d.,]*$/.test(s)) return null;
  const lastDot = s.lastIndexOf('.');
  const lastComma = s.lastIndexOf(',');
  const lastSep = Math.max(lastDot, lastComma);
  let intPart = s;
  let fracPart = '';
  if (lastSep >= 0) {
    const sep = s[lastSep];
    const tail = s.slice(lastSep + 1);
    const other = sep === '.' ? ',' : '.';
    const sepCount = s.split(sep).length - 1;
    // One separator followed by three digits and no other separator is a thousands group ("1.234", "1,234").
    const isGroup = tail.length === 3 && !s.includes(other) && (sepCount > 1 || /^\d{1,3}$/.test(s.slice(0, lastSep)));
    if (sepCount > 1 && !s.includes(other)) {
      // "1.234.567" — all separators group.
      if (!s.split(sep).slice(1).every((g) => g.length === 3)) return null;
      intPart = s.split(sep).join('');
    } else if (isGroup) {
      intPart = s.replace(sep, '');
    } else {
      intPart = s.slice(0, lastSep).replace(/[.,]/g, '');
      fracPart = tail;
      const groups = s.slice(0, lastSep).split(/[.,]/);
      if (groups.length > 1 && !groups.slice(1).every((g) => g.length === 3)) return null;
    }
  }
  if (!/^\d+$/.test(intPart) || !/^\d*$/.test(fracPart)) return null;
  const value = new Decimal(`${intPart}${fracPart ? `.${fracPart}` : ''}`);
  return (negative ? value.neg() : value).toFixed(fracPart.length);
}

/** Every number token of a line, left to right. */
export function findNumbers(text: string): NumberToken[] {
  const out: NumberToken[] = [];
  for (const m of text.matchAll(NUMBER_TOKEN)) {
    const raw = m[0];
    const value = parseNumber(raw);
    if (value === null) continue;
    out.push({ value, raw, index: m.index!, moneyLike: /[.,]\d{2}$|,-$/.test(raw) });
  }
  return out;
}

/** Money tokens only (two decimals), the way totals and prices are printed. */
export function findMoney(text: string): NumberToken[] {
  return findNumbers(text).filter((t) => t.moneyLike);
}

/** Canonical money string: two decimals. */
export function money(value: Decimal.Value): string {
  return new Decimal(value).toFixed(2);
}

export function sameMoney(a: Decimal.Value, b: Decimal.Value, tolerance = '0.011'): boolean {
  return new Decimal(a).minus(b).abs().lte(tolerance);
}
