// Validation of values users type, shared by every service (framework-free; wraps `validator` and `jsvat`).
import { checkVAT, countries } from 'jsvat';
import validator from 'validator';
import { fail } from './errors';

export function isEmail(value: string): boolean {
  return value.length <= 254 && validator.isEmail(value, { allow_display_name: false, require_tld: true });
}

export function normalizeEmail(value: string, field = 'email'): string {
  const email = value.trim().toLowerCase();
  if (!isEmail(email)) throw fail.invalid('invalid_email', `${field} is not a valid e-mail address`, field);
  return email;
}

/** Two-letter ISO 3166-1 code, stored lowercase (spec §2 Address.country_alpha2). */
export function normalizeCountry(value: string, field: string): string {
  const code = value.trim();
  if (code === '') return '';
  if (!/^[A-Za-z]{2}$/.test(code) || !validator.isISO31661Alpha2(code.toUpperCase())) {
    throw fail.invalid('invalid_country', `${field} must be a two-letter ISO 3166-1 country code`, field);
  }
  return code.toLowerCase();
}

export function normalizeCurrency(value: string, field = 'currency'): string {
  const code = value.trim().toUpperCase();
  if (!validator.isISO4217(code)) throw fail.invalid('invalid_currency', `${field} must be an ISO 4217 currency code`, field);
  return code;
}

/**
 * A registration or VAT id as lookups compare it: without spaces, dots and hyphens, upper case. A stored
 * VAT id is already in this form (normalizeVatId); a registration id keeps what was typed, so its folded
 * form is stored beside it (the contacts service's `registration_key`).
 */
export const foldIdentifier = (value: string | null | undefined): string => (value ?? '').replace(/[\s.-]/g, '').toUpperCase();

/** VAT id with its country prefix; checked with the country's checksum where one exists (jsvat). */
export function normalizeVatId(value: string, field = 'vat_id'): string {
  const vat = foldIdentifier(value);
  if (vat === '') return '';
  if (!/^[A-Z]{2}[A-Z0-9+*]{2,13}$/.test(vat)) {
    throw fail.invalid('invalid_vat_id', `${field} must start with a two-letter country prefix followed by the number`, field);
  }
  const result = checkVAT(vat, countries);
  if (result.country && !result.isValid) throw fail.invalid('invalid_vat_id', `${field} ${vat} fails the ${result.country.name} VAT check`, field);
  return vat;
}

/** Company registration number; the Czech/Slovak IČO carries a mod-11 check digit. */
export function normalizeRegistrationId(value: string, country: string, field = 'registration_id'): string {
  const id = value.trim();
  if (id === '') return '';
  if (country === 'cz' || country === 'sk') {
    if (!/^\d{8}$/.test(id) || !icoChecksumOk(id)) throw fail.invalid('invalid_registration_id', `${field} is not a valid IČO (8 digits with a check digit)`, field);
    return id;
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9 ./-]{0,29}$/.test(id)) throw fail.invalid('invalid_registration_id', `${field} has characters a registration number cannot have`, field);
  return id;
}

function icoChecksumOk(ico: string): boolean {
  const digits = [...ico].map(Number);
  const sum = digits.slice(0, 7).reduce((acc, d, i) => acc + d * (8 - i), 0);
  const remainder = sum % 11;
  const check = remainder === 0 ? 1 : remainder === 1 ? 0 : 11 - remainder;
  return check === digits[7];
}

/** IBAN in electronic format (no spaces, uppercase), ISO 13616 mod-97 checked. */
export function normalizeIban(value: string, field = 'iban'): string {
  const iban = value.replace(/\s/g, '').toUpperCase();
  if (!validator.isIBAN(iban)) throw fail.invalid('invalid_iban', `${field} is not a valid IBAN`, field);
  return iban;
}

export function normalizeBic(value: string, field = 'swift'): string {
  const bic = value.replace(/\s/g, '').toUpperCase();
  if (!validator.isBIC(bic)) throw fail.invalid('invalid_swift', `${field} is not a valid SWIFT/BIC code`, field);
  return bic;
}

/** Czech/Slovak national account number as users type it: `[prefix-]number/bank code`. */
const NATIONAL_ACCOUNT = /^(?:(\d{1,6})-)?(\d{2,10})\/(\d{4})$/;
const PREFIX_WEIGHTS = [10, 5, 8, 4, 2, 1];
const NUMBER_WEIGHTS = [6, 3, 7, 9, 10, 5, 8, 4, 2, 1];

/** The Czech/Slovak mod-11 check (Decree 169/2011): digits weighted right-aligned, the sum divisible by 11. */
function accountMod11Ok(digits: string, weights: number[]): boolean {
  const offset = weights.length - digits.length;
  const sum = [...digits].reduce((acc, d, i) => acc + Number(d) * weights[offset + i], 0);
  return sum % 11 === 0;
}

export interface AccountNumber {
  /** `prefix-number` (prefix only when non-zero, leading zeros dropped), or the foreign number as typed. */
  number: string;
  /** The bank code a national number carries after its `/`; null for a foreign number. */
  bankCode: string | null;
}

/**
 * An account number. The national form `[prefix-]number/bank code` is read as Czech/Slovak and must pass
 * the mod-11 checks of prefix and number; it is stored as `prefix-number` with the bank code apart. Any
 * other number (foreign formats) gets a character check only.
 */
export function normalizeAccountNumber(value: string, field = 'account_number'): AccountNumber {
  const typed = value.trim();
  const national = NATIONAL_ACCOUNT.exec(typed.replace(/\s+/g, ''));
  if (national) {
    const [, prefix = '', number, bankCode] = national;
    // A number needs at least two non-zero digits (the decree's rule; it also refuses an all-zero number).
    if (!accountMod11Ok(prefix, PREFIX_WEIGHTS) || !accountMod11Ok(number, NUMBER_WEIGHTS) || number.replace(/0/g, '').length < 2) {
      throw fail.invalid('invalid_account_number', `${field} ${typed} fails the Czech/Slovak account number check (mod 11)`, field);
    }
    const significantPrefix = prefix.replace(/^0+/, '');
    const significantNumber = number.replace(/^0+/, '');
    return { number: significantPrefix ? `${significantPrefix}-${significantNumber}` : significantNumber, bankCode };
  }
  if (typed.includes('/')) {
    throw fail.invalid('invalid_account_number', `${field} with a bank code must read [prefix-]number/bank code (up to 6, 10 and exactly 4 digits)`, field);
  }
  if (!/^[0-9A-Za-z -]{1,34}$/.test(typed)) throw fail.invalid('invalid_account_number', `${field} is not valid`, field);
  return { number: typed, bankCode: null };
}

/** Trimmed text of at most `max` characters (422 too_long). */
export function boundedText(value: string, field: string, max: number): string {
  const trimmed = value.trim();
  if (trimmed.length > max) throw fail.invalid('too_long', `${field} is longer than ${max} characters`, field);
  return trimmed;
}

/** A calendar date, YYYY-MM-DD, years 1900–2999 (a wider year is a typo, never a tax date). */
export function calendarDate(value: string, field: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim());
  const d = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
  if (!match || !d || d.toISOString().slice(0, 10) !== value.trim() || Number(match[1]) < 1900 || Number(match[1]) > 2999) {
    throw fail.invalid('invalid_date', `${field} must be a calendar date as YYYY-MM-DD in the years 1900–2999`, field);
  }
  return value.trim();
}

/**
 * Characters that are not shown but change what is shown or how it is read: C0 and C1 controls (Cc) and
 * format characters (Cf: the bidi overrides, embeddings and isolates such as U+202E that make
 * `invoice‮fdp.html` display as `invoice.html`, zero-width joiners, the soft hyphen, the BOM).
 */
const INVISIBLE = /[\p{Cc}\p{Cf}]/gu;

/** `text` without invisible characters (above): the one character rule of file names, stored or sent in headers. */
export const withoutInvisible = (text: string): string => text.replace(INVISIBLE, '');

/**
 * A file name as it may be stored and shown (docs/expenses.md "File names"): the last path segment, no
 * invisible characters, trimmed, at most `maxLength` characters (code points: a cut never splits a
 * surrogate pair). May be empty: the caller supplies its default. Every name that enters storage passes
 * through here.
 */
export function visibleFileName(name: string, maxLength = 200): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  return Array.from(withoutInvisible(base).trim())
    .slice(0, maxLength)
    .join('')
    .trim();
}
