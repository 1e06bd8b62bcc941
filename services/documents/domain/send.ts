// Sending an invoice by e-mail (spec §4 "Send defaults"): recipients, subject and message after
// defaults, validated. Delivery is the rendering/mail service's job; this only resolves the request.
import { fail } from '../../shared/errors';
import { isEmail } from '../../shared/validation';
import { DocumentRecord } from '../ports/documents-store';
import { Locale, locale as parseLocale, text } from './fields';
import { amountDue } from './records';

export interface SendInput {
  to: string[];
  cc: string[];
  bcc: string[];
  subject?: string;
  message?: string;
  locale?: string;
}

export interface ResolvedMail {
  to: string[];
  cc: string[];
  bcc: string[];
  subject: string;
  message: string;
  locale: Locale;
}

/**
 * Recipients per call (to + cc + bcc, after defaults): an invoice goes to a customer's accounts
 * payable and a few people around it, never to a list. Ten is what transactional mail platforms allow
 * per message for this kind of mail; above it the call is refused whole (422 too_many_recipients).
 */
export const MAX_RECIPIENTS_PER_SEND = 10;

/** How many recipients a send will mail: the `to` default (the purchaser) is one address. */
export function recipientCount(input: Pick<SendInput, 'to' | 'cc' | 'bcc'>): number {
  return Math.max(input.to.length, 1) + input.cc.length + input.bcc.length;
}

/** 422 too_many_recipients when a send names more recipients than one call may mail. */
export function checkRecipientCount(input: Pick<SendInput, 'to' | 'cc' | 'bcc'>): number {
  const count = recipientCount(input);
  if (count > MAX_RECIPIENTS_PER_SEND) {
    const field = input.bcc.length ? 'bcc' : input.cc.length ? 'cc' : 'to';
    throw fail.invalid('too_many_recipients', `to, cc and bcc together name ${count} recipients; at most ${MAX_RECIPIENTS_PER_SEND} per send`, field);
  }
  return count;
}

const TEMPLATES: Record<Locale, { subject: (n: string) => string; draft: string; body: (v: Record<string, string>) => string }> = {
  en: {
    subject: (n) => `Invoice ${n}`,
    draft: '(draft)',
    body: (v) => `Hello,\n\nplease find attached invoice ${v.number} for ${v.amount} ${v.currency}${v.due ? `, due on ${v.due}` : ''}.\n\nKind regards,\n${v.supplier}`,
  },
  cs: {
    subject: (n) => `Faktura ${n}`,
    draft: '(koncept)',
    body: (v) => `Dobrý den,\n\nv příloze zasíláme fakturu ${v.number} na částku ${v.amount} ${v.currency}${v.due ? ` se splatností ${v.due}` : ''}.\n\nS pozdravem\n${v.supplier}`,
  },
  sk: {
    subject: (n) => `Faktúra ${n}`,
    draft: '(koncept)',
    body: (v) => `Dobrý deň,\n\nv prílohe zasielame faktúru ${v.number} na sumu ${v.amount} ${v.currency}${v.due ? ` so splatnosťou ${v.due}` : ''}.\n\nS pozdravom\n${v.supplier}`,
  },
  de: {
    subject: (n) => `Rechnung ${n}`,
    draft: '(Entwurf)',
    body: (v) => `Guten Tag,\n\nanbei erhalten Sie die Rechnung ${v.number} über ${v.amount} ${v.currency}${v.due ? `, fällig am ${v.due}` : ''}.\n\nMit freundlichen Grüßen\n${v.supplier}`,
  },
};

function addresses(values: string[], field: string): string[] {
  return values.map((raw, i) => {
    const email = raw.trim();
    const name = values.length > 1 ? `${field}[${i}]` : field;
    if (!isEmail(email)) throw fail.invalid('invalid_email', `${name} is not a valid e-mail address`, name);
    return email;
  });
}

/** Applies the defaults of spec §4 and validates; 422 when no recipient remains or an address is malformed. */
export function resolveMail(invoice: DocumentRecord, input: SendInput, workspaceLocale: Locale): ResolvedMail {
  checkRecipientCount(input);
  const cc = addresses(input.cc, 'cc');
  const bcc = addresses(input.bcc, 'bcc');
  let to = addresses(input.to, 'to');
  if (to.length === 0) {
    const fallback = invoice.purchaser?.email ?? '';
    if (!fallback) throw fail.invalid('missing_recipient', 'the purchaser has no e-mail address; pass "to"', 'to');
    to = addresses([fallback], 'to');
  }
  const lang: Locale = input.locale ? parseLocale(input.locale, 'locale') : ((invoice.pdf_language as Locale) || workspaceLocale);
  const template = TEMPLATES[lang];
  const number = invoice.number ?? template.draft;
  const subject = input.subject !== undefined && input.subject.trim() !== '' ? text(input.subject, 'subject', 255) : template.subject(number);
  const message =
    input.message !== undefined && input.message.trim() !== ''
      ? text(input.message, 'message', 10_000)
      : template.body({ number, amount: amountDue(invoice), currency: invoice.currency, due: invoice.due_date ?? '', supplier: invoice.supplier.name });
  return { to, cc, bcc, subject, message, locale: lang };
}

/** "Invoice 2026000001" in a document language (the name of a netted credit-note line). */
export function invoiceTitle(language: string, number: string): string {
  return (TEMPLATES[language as Locale] ?? TEMPLATES.en).subject(number);
}
