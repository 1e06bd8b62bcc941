import { DomainError } from '../../services/shared/errors';
import {
  normalizeBic, normalizeCountry, normalizeCurrency, normalizeEmail, normalizeIban, normalizeRegistrationId, normalizeVatId,
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
