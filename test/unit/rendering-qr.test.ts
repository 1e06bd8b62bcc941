// Payment QR codes (docs/rendering.md): the scheme per supplier country and currency, encoded by the
// standards' libraries; the PNG decoded back (jsqr) carries the invoice's amount due, IBAN and
// variable symbol.
import { decode as decodePayBySquare } from 'bysquare/pay';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { paymentQr } from '../../services/rendering/domain/payment-qr';
import { qrPng } from '../../services/rendering/domain/qr-image';
import { printable, supplier } from './rendering.fixtures';

async function scan(payload: string): Promise<string> {
  const png = PNG.sync.read(await qrPng(payload));
  const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
  if (!code) throw new Error('no QR code found in the image');
  return code.data;
}

describe('payment QR code', () => {
  it('CZK → SPAYD (QR Platba): the amount due, IBAN and variable symbol, read back from the image', async () => {
    const qr = paymentQr(printable())!;
    expect(qr.scheme).toBe('spayd');
    const text = await scan(qr.payload);
    expect(text.startsWith('SPD*1.0*')).toBe(true);
    const fields = Object.fromEntries(text.split('*').slice(2).map((f) => [f.slice(0, f.indexOf(':')), f.slice(f.indexOf(':') + 1)]));
    expect(fields).toMatchObject({ ACC: 'CZ6508000000192000145399+GIBACZPX', AM: '14131.05', CC: 'CZK', 'X-VS': '2026000007' });
  });

  it('EUR → EPC/SEPA: BCD payload with the IBAN, "EUR<amount due>" and the variable symbol in the reference', async () => {
    const doc = printable({ currency: 'EUR', supplier: supplier('de'), bank_account: { name: '', iban: 'DE89370400440532013000', account_number: '', bank_code: '', swift: '' }, amount_due: '1234.50' });
    const qr = paymentQr(doc)!;
    expect(qr.scheme).toBe('epc');
    const lines = (await scan(qr.payload)).split('\n');
    expect(lines.slice(0, 4)).toEqual(['BCD', '002', '1', 'SCT']);
    expect(lines[5]).toBe('ACME s.r.o.');
    expect(lines[6]).toBe('DE89370400440532013000');
    expect(lines[7]).toBe('EUR1234.50');
    expect(lines[10]).toBe('2026000007 VS 2026000007');
  });

  it('a Slovak supplier → PAY by square, decoded by the bysquare library', async () => {
    const doc = printable({ currency: 'EUR', supplier: supplier('sk'), bank_account: { name: '', iban: 'SK3112000000198742637541', account_number: '', bank_code: '', swift: '' }, amount_due: '99.90' });
    const qr = paymentQr(doc)!;
    expect(qr.scheme).toBe('pay_by_square');
    const model = decodePayBySquare(await scan(qr.payload));
    expect(model.payments[0]).toMatchObject({
      amount: 99.9,
      currencyCode: 'EUR',
      variableSymbol: '2026000007',
      bankAccounts: [{ iban: 'SK3112000000198742637541' }],
      // The library strips diacritics, as the PAY by square specification asks.
      beneficiary: { name: 'Dodavatel Zilina s.r.o.' },
    });
  });

  it('none when nothing is payable: paid, nothing due, no IBAN, a quote or credit note, another currency', () => {
    expect(paymentQr(printable({ status: 'paid' }))).toBeNull();
    expect(paymentQr(printable({ amount_due: '0.00' }))).toBeNull();
    expect(paymentQr(printable({ bank_account: null }))).toBeNull();
    expect(paymentQr(printable({ type: 'quote', status: 'open' }))).toBeNull();
    expect(paymentQr(printable({ type: 'credit_note' }))).toBeNull();
    expect(paymentQr(printable({ currency: 'USD' }))).toBeNull();
  });

  it('leaves out a variable symbol banks would refuse (not 1–10 digits)', async () => {
    const qr = paymentQr(printable({ variable_symbol: 'FA-2026/7' }))!;
    expect(await scan(qr.payload)).not.toContain('X-VS');
  });

  it('prints no QR code rather than failing when a library refuses the data (malformed IBAN)', () => {
    expect(paymentQr(printable({ bank_account: { name: '', iban: 'CZ00 not an iban', account_number: '', bank_code: '', swift: '' } }))).toBeNull();
  });
});
