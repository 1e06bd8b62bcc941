// Exact decimal arithmetic for the money path of every service (decimal.js, never binary floating
// point) and the ISO 4217 minor units that fix how many decimals an amount of a currency has.
import DecimalJs from 'decimal.js';
import { fail } from './errors';

/** A private Decimal: 40 significant digits, half away from zero, never exponent notation. */
export const Decimal = DecimalJs.clone({ precision: 40, rounding: DecimalJs.ROUND_HALF_UP, toExpNeg: -60, toExpPos: 60 });
export type Decimal = InstanceType<typeof Decimal>;

/** Currencies whose minor unit is not 2 (ISO 4217); every other valid code has 2 decimals. */
const MINOR_UNITS: Record<string, number> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

export function minorUnits(currency: string): number {
  return MINOR_UNITS[currency] ?? 2;
}

const DECIMAL_RE = /^-?(\d+)(?:\.(\d+))?$/;

export interface DecimalRule {
  /** Most digits after the point. */
  scale: number;
  /** Most digits before the point. */
  integerDigits?: number;
  min?: string;
  /** Exclusive lower bound. */
  above?: string;
  max?: string;
}

/** Parses a decimal string exactly ("12", "-0.125"; no exponent, no spaces) or throws 422 on `field`. */
export function parseDecimal(raw: string, field: string, rule: DecimalRule): Decimal {
  const text = raw.trim();
  const match = DECIMAL_RE.exec(text);
  if (!match) throw fail.invalid('invalid_decimal', `${field} must be a decimal number such as "12.50"`, field);
  const integers = match[1].replace(/^0+(?=\d)/, '');
  if (integers.length > (rule.integerDigits ?? 12)) throw fail.invalid('out_of_range', `${field} is too large`, field);
  if ((match[2] ?? '').replace(/0+$/, '').length > rule.scale) {
    throw fail.invalid('too_many_decimals', `${field} has more than ${rule.scale} decimal places`, field);
  }
  const value = new Decimal(text);
  if (rule.min !== undefined && value.lessThan(rule.min)) throw fail.invalid('out_of_range', `${field} must be at least ${rule.min}`, field);
  if (rule.above !== undefined && value.lessThanOrEqualTo(rule.above)) {
    throw fail.invalid('out_of_range', `${field} must be greater than ${rule.above}`, field);
  }
  if (rule.max !== undefined && value.greaterThan(rule.max)) throw fail.invalid('out_of_range', `${field} must be at most ${rule.max}`, field);
  return value;
}

/** Rounds to the currency's minor unit, half away from zero. */
export function roundMoney(value: Decimal, currency: string): Decimal {
  return value.toDecimalPlaces(minorUnits(currency), Decimal.ROUND_HALF_UP);
}

/** An amount in the currency's format: exactly its minor-unit decimals ("12.50", "1200" for JPY). */
export function formatMoney(value: Decimal, currency: string): string {
  const fixed = roundMoney(value, currency).toFixed(minorUnits(currency));
  return /^-0(\.0+)?$/.test(fixed) ? fixed.slice(1) : fixed;
}

/** A decimal in plain notation without trailing zeros ("1.5", "21"). */
export function formatPlain(value: Decimal): string {
  return value.toFixed();
}

/** A unit price: at least the currency's decimals, more when it has them ("10.00", "0.125"). */
export function formatUnitPrice(value: Decimal, currency: string): string {
  return value.toFixed(Math.max(minorUnits(currency), value.decimalPlaces()));
}

export const sum = (values: Decimal[]): Decimal => values.reduce((acc, v) => acc.plus(v), new Decimal(0));
