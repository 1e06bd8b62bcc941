// Document totals: the one implementation is services/shared/totals.ts (shared with expenses); what
// is particular to documents (a full credit of an invoice) stays here.
import { fail } from '../../shared/errors';
import { Decimal } from '../../shared/money';
import { pricedLine } from '../../shared/totals';
import { DocumentRecord, LineItemData } from '../ports/documents-store';

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
