import { DomainError } from '../../services/shared/errors';
import {
  normalizeBic, normalizeCountry, normalizeCurrency, normalizeEmail, normalizeIban, normalizeRegistrationId, normalizeVatId, visibleFileName,
} from '../../services/shared/validation';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as DomainError).code;
  }
  return 'ok';
};

describe('validation of what users type', () => {
  it('VAT ids: prefix required, country checksum enforced where one exists', () => {
    expect(normalizeVatId('cz 255 966 41')).toBe('CZ25596641');
    expect(normalizeVatId('DE136695976')).toBe('DE136695976');
    expect(code(() => normalizeVatId('CZ25596642'))).toBe('invalid_vat_id');
    expect(code(() => normalizeVatId('25596641'))).toBe('invalid_vat_id');
  });

  it('IČO registration ids carry a mod-11 check digit; other countries get a format check', () => {
    expect(normalizeRegistrationId('25596641', 'cz')).toBe('25596641');
    expect(code(() => normalizeRegistrationId('25596642', 'cz'))).toBe('invalid_registration_id');
    expect(normalizeRegistrationId('HRB 12345', 'de')).toBe('HRB 12345');
    expect(code(() => normalizeRegistrationId('<script>', 'de'))).toBe('invalid_registration_id');
  });

  it('IBAN (ISO 13616 mod 97), BIC, e-mail, ISO 3166 country, ISO 4217 currency', () => {
    expect(normalizeIban('de89 3704 0044 0532 0130 00')).toBe('DE89370400440532013000');
    expect(code(() => normalizeIban('DE89370400440532013001'))).toBe('invalid_iban');
    expect(normalizeBic('deutdeff500')).toBe('DEUTDEFF500');
    expect(code(() => normalizeBic('DEUT'))).toBe('invalid_swift');
    expect(normalizeEmail(' Ana@Example.COM ')).toBe('ana@example.com');
    expect(code(() => normalizeEmail('ana@'))).toBe('invalid_email');
    expect(normalizeCountry('CZ', 'c')).toBe('cz');
    expect(code(() => normalizeCountry('XX', 'c'))).toBe('invalid_country');
    expect(normalizeCurrency('eur')).toBe('EUR');
    expect(code(() => normalizeCurrency('ABC'))).toBe('invalid_currency');
  });
});

describe('File names (visibleFileName: the one rule for every stored name)', () => {
  it('drops bidi controls and other format characters (Cf), C0 and C1 controls', () => {
    expect(visibleFileName('invoice\u202Efdp.html')).toBe('invoicefdp.html');
    for (const c of ['\u202A', '\u202B', '\u202C', '\u202D', '\u2066', '\u2067', '\u2068', '\u2069', '\u200E', '\u200F', '\u061C', '\u200B', '\u200D', '\u2060', '\uFEFF', '\u00AD', '\u0000', '\u001F', '\u007F', '\u0085', '\u009F']) {
      expect({ c: c.codePointAt(0)!.toString(16), name: visibleFileName(`a${c}b.pdf`) }).toEqual({ c: c.codePointAt(0)!.toString(16), name: 'ab.pdf' });
    }
  });

  it('keeps what is visible: letters of any script, spaces, punctuation', () => {
    expect(visibleFileName('Faktúra č. 7 (kópia) – 請求書.pdf')).toBe('Faktúra č. 7 (kópia) – 請求書.pdf');
  });

  it('keeps the last path segment, trims, and bounds the length in code points (never half a surrogate pair)', () => {
    expect(visibleFileName('C:\\Users\\me\\../receipt.pdf ')).toBe('receipt.pdf');
    const cut = visibleFileName(`${'a'.repeat(199)}😀😀.pdf`);
    expect(cut).toBe(`${'a'.repeat(199)}😀`);
    expect(cut).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // no lone high surrogate
    expect(visibleFileName('\u202E \u200B')).toBe('');
  });
});
