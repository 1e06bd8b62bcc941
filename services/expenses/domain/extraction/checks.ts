// Checksums that choose between candidates: IBAN mod-97, EU VAT ids (jsvat, through the shared
// validation), Czech/Slovak IČO mod-11, BIC shape. Each answers yes/no instead of throwing.
import { normalizeBic, normalizeIban, normalizeRegistrationId, normalizeVatId } from '../../../shared/validation';

function passes(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

export const isValidIban = (value: string): boolean => passes(() => normalizeIban(value));
export const isValidBic = (value: string): boolean => passes(() => normalizeBic(value));
/** Czech/Slovak IČO: eight digits, mod-11 check digit. */
export const isValidIco = (value: string): boolean => passes(() => normalizeRegistrationId(value, 'sk'));
/** A VAT id with a country prefix that passes that country's check (jsvat); unknown countries fail. */
export function isValidVatId(value: string): boolean {
  const vat = value.replace(/[\s.-]/g, '').toUpperCase();
  return /^[A-Z]{2}/.test(vat) && KNOWN_VAT_PREFIXES.has(vat.slice(0, 2)) && passes(() => normalizeVatId(vat));
}

const KNOWN_VAT_PREFIXES = new Set(['AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'EL', 'ES', 'FI', 'FR', 'GB', 'HR', 'HU', 'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK', 'CH', 'NO']);

/** OCR confuses letters and digits; in a field that must be digits, read the look-alikes as digits. */
export function digitsFromLookalikes(value: string): string {
  return value.replace(/[Oo]/g, '0').replace(/[Il|]/g, '1').replace(/S/g, '5').replace(/B/g, '8').replace(/Z/g, '2');
}
