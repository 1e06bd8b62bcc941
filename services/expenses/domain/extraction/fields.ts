// Reads an expense's fields from the lines of a document (pure: the same lines give the same fields).
// `broad` (the escalated tier) also reads OCR look-alikes in digit fields and unlabelled candidates.
import { ExtractedFields, FieldConfidence } from '../../ports/extractor';
import { digitsFromLookalikes, isValidBic, isValidIban } from './checks';
import { segmentBelow, valuesAfterLabel } from './context';
import { findAmounts } from './amounts';
import { findDates, plausibleDate } from './dates';
import { CURRENCY_SIGNS, LABELS, TITLES } from './labels';
import { Line } from './layout';
import { findSupplier } from './parties';

export interface ParseOptions {
  broad?: boolean;
  now?: Date;
}

export interface ParsedFields {
  fields: ExtractedFields;
  confidence: FieldConfidence;
}

export function parseFields(lines: Line[], options: ParseOptions = {}): ParsedFields {
  const broad = options.broad ?? false;
  const now = options.now ?? new Date();
  const { supplier, confidence, outsideCustomer } = findSupplier(lines, broad);
  const amounts = findAmounts(lines, broad);
  Object.assign(confidence, amounts.confidence);

  const fields: ExtractedFields = {
    supplier,
    document_number: null,
    issue_date: null,
    due_date: null,
    currency: null,
    subtotal: amounts.subtotal,
    vat_total: amounts.vat_total,
    total: amounts.total,
    vat_breakdown: amounts.vat_breakdown,
    iban: null,
    bic: null,
    variable_symbol: null,
    line_items: amounts.line_items,
  };

  readIban(lines, fields, confidence, broad, outsideCustomer);
  readBic(lines, fields, confidence);
  readDocumentNumber(lines, fields, confidence);
  readDates(lines, fields, confidence, now, broad);
  readVariableSymbol(lines, fields, confidence);
  readCurrency(lines, fields, confidence);
  return { fields, confidence };
}

/** The supplier's account: outside the customer's block first (the customer's own IBAN may be printed
 * in it), then anywhere. */
function readIban(lines: Line[], fields: ExtractedFields, confidence: FieldConfidence, broad: boolean, outsideCustomer: Line[]): void {
  for (const scope of [outsideCustomer, lines]) {
    for (let i = 0; i < scope.length; i++) {
      for (const m of scope[i].text.toUpperCase().matchAll(/\b([A-Z]{2}\s?[0-9O]{2}(?:\s?[A-Z0-9]{4}){2,7}(?:\s?[A-Z0-9]{1,3})?)\b/g)) {
        const compact = m[1].replace(/\s/g, '');
        const candidates = [compact];
        if (broad) candidates.push(compact.slice(0, 2) + digitsFromLookalikes(compact.slice(2)));
        // Shorter prefixes too: a BIC or a word may run into the last group.
        for (const c of candidates) {
          for (let len = c.length; len >= 15; len--) {
            if (isValidIban(c.slice(0, len))) {
              fields.iban = c.slice(0, len);
              confidence.iban = LABELS.iban.test(scope[i].text) ? 0.98 : 0.92;
              return;
            }
          }
        }
      }
    }
    // An IBAN broken over two lines of a narrow column: its start ends a segment, the rest begins the
    // segment below it. The mod-97 check decides where it ends.
    for (let i = 0; i < scope.length; i++) {
      for (const seg of scope[i].segments) {
        const head = seg.text.toUpperCase().match(/\b([A-Z]{2}\s?\d{2}(?:\s?[A-Z0-9]{4}){1,6}\s?[A-Z0-9]{0,3})$/)?.[1];
        const below = head ? segmentBelow(scope, i, seg) : undefined;
        if (!head || !below) continue;
        const joined = (head + below.text.toUpperCase().match(/^[A-Z0-9 ]+/)?.[0]).replace(/\s/g, '');
        for (let len = Math.min(joined.length, 34); len >= 15; len--) {
          if (isValidIban(joined.slice(0, len))) {
            fields.iban = joined.slice(0, len);
            confidence.iban = 0.9;
            return;
          }
        }
      }
    }
  }
}

function readBic(lines: Line[], fields: ExtractedFields, confidence: FieldConfidence): void {
  for (let i = 0; i < lines.length; i++) {
    if (!LABELS.bic.test(lines[i].text)) continue;
    const labelled = lines[i].text.split(/bic|swift/i).slice(1).join(' ');
    for (const m of labelled.toUpperCase().matchAll(/\b([A-Z]{6}[A-Z0-9]{2}(?:[A-Z0-9]{3})?)\b/g)) {
      if (isValidBic(m[1])) {
        fields.bic = m[1];
        confidence.bic = 0.93;
        return;
      }
    }
  }
}

function readDocumentNumber(lines: Line[], fields: ExtractedFields, confidence: FieldConfidence): void {
  for (let i = 0; i < lines.length; i++) {
    if (!LABELS.documentNumber.test(lines[i].text)) continue;
    for (const found of valuesAfterLabel(lines, i, LABELS.documentNumber)) {
      const token = found.text.match(/^[#№]?\s*([A-Z0-9][A-Z0-9/_.-]*\d[A-Z0-9/_-]*)/iu)?.[1];
      if (token) {
        fields.document_number = token;
        confidence.document_number = found.inline ? 0.92 : 0.8;
        return;
      }
    }
  }
  // A title with its number: "FAKTÚRA 2026001", "Invoice INV-2026-0042".
  for (const line of lines.slice(0, 12)) {
    const m = line.text.match(new RegExp(`${TITLES.source}[^\\n\\d]{0,20}?\\s([A-Z]{0,5}[-/]?\\d[A-Z0-9/_-]{2,})`, 'iu'));
    if (m) {
      fields.document_number = m[1];
      confidence.document_number = 0.7;
      return;
    }
  }
}

function readDates(lines: Line[], fields: ExtractedFields, confidence: FieldConfidence, now: Date, broad: boolean): void {
  const labelled = (label: RegExp): { iso: string; inline: boolean } | null => {
    for (let i = 0; i < lines.length; i++) {
      if (!label.test(lines[i].text)) continue;
      for (const found of valuesAfterLabel(lines, i, label)) {
        const date = findDates(found.text).find((d) => plausibleDate(d.iso, now));
        if (date) return { iso: date.iso, inline: found.inline };
      }
    }
    return null;
  };
  const issue = labelled(LABELS.issueDate) ?? labelled(LABELS.genericDate);
  const due = labelled(LABELS.dueDate);
  if (issue) {
    fields.issue_date = issue.iso;
    confidence.issue_date = issue.inline ? 0.92 : 0.85;
  }
  if (due && (!fields.issue_date || due.iso >= fields.issue_date)) {
    fields.due_date = due.iso;
    confidence.due_date = due.inline ? 0.92 : 0.85;
  }
  if (!fields.due_date && fields.issue_date && lines.some((l) => LABELS.iban.test(l.text) || LABELS.variableSymbol.test(l.text))) {
    // An invoice to be paid whose due-date label is not one we know: a labelled date after the issue
    // date, within 120 days of it, on a line that is not the issue or tax-point date's.
    const latest = addDays(fields.issue_date, 120);
    for (let i = 0; i < lines.length && !fields.due_date; i++) {
      if (LABELS.issueDate.test(lines[i].text) || LABELS.taxPointDate.test(lines[i].text) || !/\p{L}{2}/u.test(lines[i].text)) continue;
      const date = findDates(lines[i].text).find((d) => d.iso > fields.issue_date! && d.iso <= latest && plausibleDate(d.iso, now));
      if (date) {
        fields.due_date = date.iso;
        confidence.due_date = 0.5;
      }
    }
  }
  if (!fields.issue_date) {
    // Receipts print the date without a label, often with the time: the first plausible date.
    const taxPointLines = new Set(lines.flatMap((l, i) => (LABELS.taxPointDate.test(l.text) || LABELS.dueDate.test(l.text) ? [i] : [])));
    for (let i = 0; i < lines.length && !fields.issue_date; i++) {
      if (taxPointLines.has(i) && !broad) continue;
      const date = findDates(lines[i].text).find((d) => plausibleDate(d.iso, now));
      if (date) {
        fields.issue_date = date.iso;
        confidence.issue_date = 0.6;
      }
    }
  }
}

function addDays(iso: string, days: number): string {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

function readVariableSymbol(lines: Line[], fields: ExtractedFields, confidence: FieldConfidence): void {
  for (let i = 0; i < lines.length; i++) {
    if (!LABELS.variableSymbol.test(lines[i].text)) continue;
    for (const found of valuesAfterLabel(lines, i, LABELS.variableSymbol)) {
      const vs = found.text.match(/^(\d{1,10})(?!\d)/)?.[1];
      if (vs) {
        fields.variable_symbol = vs;
        confidence.variable_symbol = 0.92;
        return;
      }
    }
  }
}

function readCurrency(lines: Line[], fields: ExtractedFields, confidence: FieldConfidence): void {
  const counts = new Map<string, number>();
  for (const line of lines) {
    for (const [re, code] of CURRENCY_SIGNS) {
      const n = line.text.split(new RegExp(re.source, 'gu')).length - 1;
      if (n > 0) counts.set(code, (counts.get(code) ?? 0) + n * (LABELS.total.test(line.text) ? 3 : 1));
    }
  }
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
  if (best) {
    fields.currency = best[0];
    confidence.currency = counts.size === 1 ? 0.95 : 0.75;
  } else if (fields.iban) {
    // No printed currency: the account's country says it (CZ accounts are mostly CZK).
    fields.currency = fields.iban.startsWith('CZ') ? 'CZK' : fields.iban.startsWith('GB') ? 'GBP' : 'EUR';
    confidence.currency = 0.4;
  }
}
