// Field-level scoring of an extraction against its labels: each labelled (non-null) field is one
// expected instance, each VAT row and each line item one more; a prediction is a true positive when it
// equals the label (identifiers and money exactly, free text — names, streets, towns — at a normalised
// similarity of at least 0.9, so one misread letter in a name is not a lost field, two are).
import Decimal from 'decimal.js';
import type { ExtractedFields } from '../../services/expenses/ports/extractor';

export interface Score {
  tp: number;
  fp: number;
  fn: number;
}

export const SCALAR_FIELDS = [
  'supplier.name', 'supplier.registration_id', 'supplier.tax_id', 'supplier.vat_id',
  'supplier.address.street', 'supplier.address.municipality', 'supplier.address.postal_code', 'supplier.address.country_alpha2',
  'document_number', 'issue_date', 'due_date', 'currency', 'subtotal', 'vat_total', 'total', 'iban', 'bic', 'variable_symbol',
] as const;
const FREE_TEXT = new Set(['supplier.name', 'supplier.address.street', 'supplier.address.municipality']);
const MONEY = new Set(['subtotal', 'vat_total', 'total']);

const norm = (s: string) => s.normalize('NFC').replace(/\s+/g, ' ').trim().toLowerCase();
const compact = (s: string) => s.replace(/[\s-]/g, '').toUpperCase();

export function similarity(a: string, b: string): number {
  const x = norm(a);
  const y = norm(b);
  if (x === y) return 1;
  const prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= y.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (x[i - 1] === y[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return 1 - prev[y.length] / Math.max(x.length, y.length, 1);
}

function get(fields: ExtractedFields, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o == null ? null : (o as Record<string, unknown>)[k]), fields);
}

const moneyEq = (a: string | null, b: string | null) => a === b || (a !== null && b !== null && new Decimal(a).eq(b));

export function fieldMatches(path: string, expected: string, actual: string): boolean {
  if (FREE_TEXT.has(path)) return similarity(expected, actual) >= 0.9;
  if (MONEY.has(path)) return moneyEq(expected, actual);
  return compact(expected) === compact(actual);
}

/** Per field path (rows under `vat_breakdown` and `line_items`). */
export function scoreFields(expected: ExtractedFields, actual: ExtractedFields | null): Record<string, Score> {
  const out: Record<string, Score> = {};
  for (const path of SCALAR_FIELDS) {
    const e = get(expected, path) as string | null;
    const a = actual ? (get(actual, path) as string | null) : null;
    const s: Score = { tp: 0, fp: 0, fn: 0 };
    if (e !== null && a !== null && fieldMatches(path, e, a)) s.tp = 1;
    else {
      if (a !== null) s.fp = 1;
      if (e !== null) s.fn = 1;
    }
    out[path] = s;
  }
  const rows = (exp: unknown[], act: unknown[], same: (x: any, y: any) => boolean): Score => {
    const left = [...act];
    let tp = 0;
    for (const e of exp) {
      const i = left.findIndex((a) => same(e, a));
      if (i >= 0) {
        tp++;
        left.splice(i, 1);
      }
    }
    return { tp, fp: left.length, fn: exp.length - tp };
  };
  out.vat_breakdown = rows(expected.vat_breakdown, actual?.vat_breakdown ?? [], (e, a) => new Decimal(e.rate).eq(a.rate) && moneyEq(e.base, a.base) && moneyEq(e.vat, a.vat));
  out.line_items = rows(
    expected.line_items,
    actual?.line_items ?? [],
    (e, a) => similarity(e.name, a.name) >= 0.8 && moneyEq(e.total, a.total) && (e.quantity === null || (a.quantity !== null && new Decimal(e.quantity).eq(a.quantity))) && moneyEq(e.unit_price, a.unit_price),
  );
  return out;
}

export function add(into: Score, s: Score): Score {
  into.tp += s.tp;
  into.fp += s.fp;
  into.fn += s.fn;
  return into;
}

export function prf(s: Score): { precision: number; recall: number; f1: number } {
  const precision = s.tp + s.fp === 0 ? 1 : s.tp / (s.tp + s.fp);
  const recall = s.tp + s.fn === 0 ? 1 : s.tp / (s.tp + s.fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}
