// Totals of priced lines, exact to the minor unit of the currency (EN 16931 style), for every service
// that prices lines (documents, expenses) — one implementation:
//   line net      = round(quantity × unit_price × (1 − discount / 100))          per line   (BT-131)
//   base per rate = Σ line nets with that VAT rate                                (BT-116)
//   VAT per rate  = round(base × rate / 100)                                      per rate   (BT-117)
//   subtotal = Σ bases, vat_total = Σ VAT per rate, total = subtotal + vat_total
// Rounding is half away from zero. VAT is rounded once per rate on the document, never per line.
// Framework-free: domain code imports it.
import { Decimal, formatMoney, formatPlain, formatUnitPrice, roundMoney, sum } from './money';

export interface LineAmounts {
  quantity: Decimal;
  unit_price: Decimal;
  vat_rate: Decimal;
  discount: Decimal;
}

/** The amounts of a priced line as stored: normalised decimal strings (formatPlain / formatUnitPrice). */
export interface PricedAmounts {
  quantity: string;
  unit_price: string;
  vat_rate: string;
  discount: string;
  net_amount: string;
}

export interface VatRateTotal {
  vat_rate: string;
  base: string;
  vat: string;
}

export interface Totals {
  subtotal: string;
  vat_breakdown: VatRateTotal[];
  vat_total: string;
  total: string;
}

export function lineNet(line: LineAmounts, currency: string): Decimal {
  const factor = new Decimal(100).minus(line.discount).dividedBy(100);
  return roundMoney(line.quantity.times(line.unit_price).times(factor), currency);
}

/** Normalises a parsed line's amounts and computes its net amount; `rest` (name, ids, …) is kept. */
export function pricedLine<R extends object>(rest: R, amounts: LineAmounts, currency: string): R & PricedAmounts {
  return {
    ...rest,
    quantity: formatPlain(amounts.quantity),
    unit_price: formatUnitPrice(amounts.unit_price, currency),
    vat_rate: formatPlain(amounts.vat_rate),
    discount: formatPlain(amounts.discount),
    net_amount: formatMoney(lineNet(amounts, currency), currency),
  };
}

/** The stored amounts of a line, parsed back. */
export const amountsOf = (line: PricedAmounts): LineAmounts => ({
  quantity: new Decimal(line.quantity),
  unit_price: new Decimal(line.unit_price),
  vat_rate: new Decimal(line.vat_rate),
  discount: new Decimal(line.discount),
});

/** Re-prices stored lines (e.g. after the currency changed). */
export function repriceLines<L extends PricedAmounts>(lines: L[], currency: string): L[] {
  return lines.map((l) => pricedLine(l, amountsOf(l), currency));
}

export function computeTotals(lines: PricedAmounts[], currency: string): Totals {
  const bases = new Map<string, Decimal>();
  for (const line of lines) {
    const rate = formatPlain(new Decimal(line.vat_rate));
    bases.set(rate, (bases.get(rate) ?? new Decimal(0)).plus(line.net_amount));
  }
  const rates = [...bases.keys()].sort((a, b) => new Decimal(b).comparedTo(a));
  const breakdown = rates.map((rate) => {
    const base = bases.get(rate)!;
    return { rate, base, vat: roundMoney(base.times(rate).dividedBy(100), currency) };
  });
  const subtotal = sum(breakdown.map((b) => b.base));
  const vatTotal = sum(breakdown.map((b) => b.vat));
  return {
    subtotal: formatMoney(subtotal, currency),
    vat_breakdown: breakdown.map((b) => ({ vat_rate: b.rate, base: formatMoney(b.base, currency), vat: formatMoney(b.vat, currency) })),
    vat_total: formatMoney(vatTotal, currency),
    total: formatMoney(subtotal.plus(vatTotal), currency),
  };
}
