// The escalated tier reads a document several ways (page-segmentation modes, resolutions, a provider);
// this picks each field by vote: the value the most confident readings agree on. The first reading is
// the standard tier's, and it wins ties, so escalating never loses a field the standard tier had.
import { ExtractedFields, FieldConfidence } from '../../ports/extractor';
import { ParsedFields } from './fields';

type Path = string;

const SCALAR_PATHS: Path[] = [
  'supplier.name', 'supplier.registration_id', 'supplier.tax_id', 'supplier.vat_id',
  'supplier.address.street', 'supplier.address.municipality', 'supplier.address.postal_code', 'supplier.address.country_alpha2',
  'document_number', 'issue_date', 'due_date', 'currency', 'iban', 'bic', 'variable_symbol',
];
/** Amounts travel together: a reading's subtotal, VAT and total add up with each other, not across readings. */
const AMOUNT_GROUP: (keyof ExtractedFields)[] = ['subtotal', 'vat_total', 'total', 'vat_breakdown'];

function get(fields: ExtractedFields, path: Path): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o == null ? null : (o as Record<string, unknown>)[k]), fields);
}

function set(fields: ExtractedFields, path: Path, value: unknown): void {
  const keys = path.split('.');
  const last = keys.pop()!;
  const target = keys.reduce<Record<string, unknown>>((o, k) => o[k] as Record<string, unknown>, fields as unknown as Record<string, unknown>);
  target[last] = value;
}

const key = (v: unknown) => JSON.stringify(v);

export function mergeReadings(readings: ParsedFields[]): ParsedFields {
  const [first] = readings;
  const fields: ExtractedFields = JSON.parse(JSON.stringify(first.fields));
  const confidence: FieldConfidence = {};
  for (const path of SCALAR_PATHS) {
    const votes = new Map<string, { value: unknown; score: number; best: number; order: number }>();
    readings.forEach((r, order) => {
      const value = get(r.fields, path);
      if (value === null || value === undefined) return;
      const c = r.confidence[path] ?? 0.5;
      const vote = votes.get(key(value)) ?? { value, score: 0, best: 0, order };
      vote.score += c;
      vote.best = Math.max(vote.best, c);
      votes.set(key(value), vote);
    });
    const winner = [...votes.values()].sort((a, b) => b.score - a.score || a.order - b.order)[0];
    set(fields, path, winner ? winner.value : null);
    if (winner) confidence[path] = Math.min(0.99, winner.best + (winner.score > winner.best ? 0.03 : 0));
  }
  const amountScore = (r: ParsedFields) => AMOUNT_GROUP.reduce((s, k) => s + (r.confidence[k] ?? 0), 0);
  const amounts = readings.reduce((best, r) => (amountScore(r) > amountScore(best) ? r : best), first);
  for (const k of AMOUNT_GROUP) {
    (fields as unknown as Record<string, unknown>)[k] = amounts.fields[k];
    if (amounts.confidence[k] !== undefined) confidence[k] = amounts.confidence[k];
  }
  const items = readings.reduce((best, r) => ((r.confidence.line_items ?? 0) > (best.confidence.line_items ?? 0) ? r : best), first);
  fields.line_items = items.fields.line_items;
  if (items.confidence.line_items !== undefined) confidence.line_items = items.confidence.line_items;
  return { fields, confidence };
}
