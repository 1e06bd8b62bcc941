import { fail } from '../../shared/errors';

// Pragmatic address check: one @, a dotted domain, no spaces or angle brackets (RFC 5322 minus comments).
const EMAIL_RE = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL_RE.test(value);
}

export function normalizeEmail(value: string, field = 'email'): string {
  const email = value.trim().toLowerCase();
  if (!isEmail(email)) throw fail.invalid('invalid_email', `${field} is not a valid e-mail address`, field);
  return email;
}
