// Document totals: exact decimal arithmetic, rounding per line and VAT per rate (docs/documents.md).
import { lineItems } from '../../services/documents/domain/fields';
import { formatMoney, Decimal, minorUnits } from '../../services/shared/money';
import { computeTotals } from '../../services/shared/totals';
import { DomainError } from '../../services/shared/errors';

const totals = (items: Array<Record<string, string>>, currency = 'EUR', type: 'invoice' | 'credit_note' = 'invoice') =>
  computeTotals(lineItems(items.map((i) => ({ name: 'x', unit_price: '0', ...i })), currency, type), currency);

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as DomainError).code;
  }
  return 'no error';
};

describe('totals', () => {
  it('0.1 + 0.2 is exactly 0.30', () => {
    const t = totals([{ unit_price: '0.1' }, { unit_price: '0.2' }]);
    expect(t).toEqual({ subtotal: '0.30', vat_breakdown: [{ vat_rate: '0', base: '0.30', vat: '0.00' }], vat_total: '0.00', total: '0.30' });
  });

  it('rounds each line net half away from zero, then VAT once per rate', () => {
    // 3 × 0.335 = 1.005 → 1.01 (binary floating point would give 1.00)
    const t = totals([{ quantity: '3', unit_price: '0.335', vat_rate: '21' }]);
    expect(t.subtotal).toBe('1.01');
    expect(t.vat_total).toBe('0.21');
    expect(t.total).toBe('1.22');
  });

  it('VAT is rounded per rate on the document, not per line', () => {
    // 10 lines of 0.05 at 21 %: per line VAT would be 10 × 0.01 = 0.10; per rate it is round(0.50 × 0.21) = 0.11
    const t = totals(Array.from({ length: 10 }, () => ({ unit_price: '0.05', vat_rate: '21' })));
    expect(t.vat_breakdown).toEqual([{ vat_rate: '21', base: '0.50', vat: '0.11' }]);
    expect(t.total).toBe('0.61');
  });

  it('many lines with 3-decimal unit prices and zero, reduced and standard rates', () => {
    const items = [];
    for (let i = 0; i < 300; i++) items.push({ quantity: '1.5', unit_price: '0.333', vat_rate: ['0', '12', '21'][i % 3] });
    const t = totals(items);
    // each line: 1.5 × 0.333 = 0.4995 → 0.50; 100 lines per rate → base 50.00
    expect(t.vat_breakdown).toEqual([
      { vat_rate: '21', base: '50.00', vat: '10.50' },
      { vat_rate: '12', base: '50.00', vat: '6.00' },
      { vat_rate: '0', base: '50.00', vat: '0.00' },
    ]);
    expect(t).toMatchObject({ subtotal: '150.00', vat_total: '16.50', total: '166.50' });
  });

  it('applies line discounts before rounding', () => {
    const t = totals([{ quantity: '3', unit_price: '9.99', discount: '15', vat_rate: '10' }]);
    // 29.97 × 0.85 = 25.4745 → 25.47; VAT 2.547 → 2.55
    expect(t).toMatchObject({ subtotal: '25.47', vat_total: '2.55', total: '28.02' });
  });

  it('treats 21 and 21.00 as the same rate', () => {
    const t = totals([{ unit_price: '1', vat_rate: '21' }, { unit_price: '1', vat_rate: '21.00' }]);
    expect(t.vat_breakdown).toHaveLength(1);
  });

  it('uses the currency minor unit (JPY 0, KWD 3)', () => {
    expect(minorUnits('JPY')).toBe(0);
    expect(totals([{ quantity: '3', unit_price: '33.5', vat_rate: '10' }], 'JPY')).toMatchObject({ subtotal: '101', vat_total: '10', total: '111' });
    expect(totals([{ unit_price: '1.2345', vat_rate: '5' }], 'KWD')).toMatchObject({ subtotal: '1.235', vat_total: '0.062', total: '1.297' });
  });

  it('formats without exponent notation or negative zero', () => {
    expect(formatMoney(new Decimal('1e-7'), 'EUR')).toBe('0.00');
    expect(formatMoney(new Decimal('-0.001'), 'EUR')).toBe('0.00');
    expect(formatMoney(new Decimal('123456789012.345'), 'EUR')).toBe('123456789012.35');
  });
});

describe('line item validation', () => {
  it('normalises amounts and defaults quantity 1, vat_rate 0, discount 0', () => {
    const [line] = lineItems([{ name: ' Widget ', unit_price: '10' }], 'EUR', 'invoice');
    expect(line).toEqual({ name: 'Widget', description: '', quantity: '1', unit: '', unit_price: '10.00', vat_rate: '0', discount: '0', net_amount: '10.00' });
    expect(lineItems([{ name: 'a', unit_price: '0.125', quantity: '2.500' }], 'EUR', 'invoice')[0]).toMatchObject({ unit_price: '0.125', quantity: '2.5' });
  });

  it('refuses malformed and out-of-range amounts with 422 codes', () => {
    const one = (item: Record<string, string>, type: 'invoice' | 'credit_note' = 'invoice') => () => lineItems([{ name: 'a', unit_price: '1', ...item }], 'EUR', type);
    expect(code(one({ unit_price: '1e3' }))).toBe('invalid_decimal');
    expect(code(one({ unit_price: '1,5' }))).toBe('invalid_decimal');
    expect(code(one({ unit_price: '0.1234567' }))).toBe('too_many_decimals');
    expect(code(one({ quantity: '0' }))).toBe('out_of_range');
    expect(code(one({ vat_rate: '-1' }))).toBe('out_of_range');
    expect(code(one({ vat_rate: '100' }))).toBe('out_of_range');
    expect(code(one({ discount: '101' }))).toBe('out_of_range');
    expect(code(one({ name: ' ' }))).toBe('missing_field');
    expect(code(one({ unit_price: '-5' }, 'credit_note'))).toBe('out_of_range');
    expect(code(one({ unit_price: '-5' }))).toBe('no error');
  });
});
