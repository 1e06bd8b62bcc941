// Document totals, exact to the minor unit of the document's currency (EN 16931 style):
//   line net      = round(quantity × unit_price × (1 − discount / 100))          per line   (BT-131)
//   base per rate = Σ line nets with that VAT rate                                (BT-116)
//   VAT per rate  = round(base × rate / 100)                                      per rate   (BT-117)
//   subtotal = Σ bases, vat_total = Σ VAT per rate, total = subtotal + vat_total
// Rounding is half away from zero. VAT is rounded once per rate on the document, never per line.
import { fail } from '../../shared/errors';
import { DocumentRecord, LineItemData, Totals } from '../ports/documents-store';
import { Decimal, formatMoney, formatPlain, formatUnitPrice, roundMoney, sum } from './money';

export interface LineAmounts {
  quantity: Decimal;
  unit_price: Decimal;
  vat_rate: Decimal;
  discount: Decimal;
}

export function lineNet(line: LineAmounts, currency: string): Decimal {
  const factor = new Decimal(100).minus(line.discount).dividedBy(100);
  return roundMoney(line.quantity.times(line.unit_price).times(factor), currency);
}

/** Normalises a parsed line's amounts and computes its net amount. */
export function pricedLine(text: { name: string; description: string; unit: string }, amounts: LineAmounts, currency: string): LineItemData {
  return {
    ...text,
    quantity: formatPlain(amounts.quantity),
    unit_price: formatUnitPrice(amounts.unit_price, currency),
    vat_rate: formatPlain(amounts.vat_rate),
    discount: formatPlain(amounts.discount),
    net_amount: formatMoney(lineNet(amounts, currency), currency),
  };
}

/** Re-prices stored lines (e.g. after the currency changed). */
export function repriceLines(lines: LineItemData[], currency: string): LineItemData[] {
  return lines.map((l) =>
    pricedLine(
      { name: l.name, description: l.description, unit: l.unit },
      { quantity: new Decimal(l.quantity), unit_price: new Decimal(l.unit_price), vat_rate: new Decimal(l.vat_rate), discount: new Decimal(l.discount) },
      currency,
    ),
  );
}

export function computeTotals(lines: LineItemData[], currency: string): Totals {
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

/**
 * The lines of a full credit of `invoice`. Credit-note lines are positive amounts, so an invoice with
 * deductions (negative lines) is credited by one line per VAT rate carrying that rate's net base
 * ("Invoice <number>"): the same bases and so, VAT being rounded per rate, exactly the invoice's
 * totals. A rate whose base is negative cannot be credited that way (422 negative_line_items).
 */
export function fullCreditLines(invoice: DocumentRecord, lineName: string): LineItemData[] {
  if (!invoice.line_items.some((l) => new Decimal(l.unit_price).isNegative())) return invoice.line_items;
  const lines: LineItemData[] = [];
  for (const rate of invoice.totals.vat_breakdown) {
    const base = new Decimal(rate.base);
    if (base.isZero()) continue;
    if (base.isNegative()) {
      throw fail.invalid(
        'negative_line_items',
        `the invoice's deductions at ${rate.vat_rate} % exceed its lines at that rate: send the credit note's line_items (positive amounts)`,
        'line_items',
      );
    }
    lines.push(
      pricedLine(
        { name: lineName, description: '', unit: '' },
        { quantity: new Decimal(1), unit_price: base, vat_rate: new Decimal(rate.vat_rate), discount: new Decimal(0) },
        invoice.currency,
      ),
    );
  }
  return lines;
}
