// Finding the value that belongs to a label: after it in the same segment, in the next segment of the
// same line, or in the segment below it (forms print the value under the label).
import { LABELS } from './labels';
import { Line, Segment } from './layout';

/** Any field's label: a segment that is one is another key, never this key's value. */
const FIELD_LABEL = new RegExp(
  [LABELS.documentNumber, LABELS.issueDate, LABELS.dueDate, LABELS.taxPointDate, LABELS.variableSymbol, LABELS.iban, LABELS.bic, LABELS.customerBlock, LABELS.supplierBlock].map((r) => `^(?:${r.source})[\\s:.#]*$`).join('|'),
  'iu',
);
export const isBareLabel = (text: string) => FIELD_LABEL.test(text.trim());

export interface Found {
  text: string;
  /** Index of the line the value was read from. */
  line: number;
  /** The value was next to its label (true) or below it (false). */
  inline: boolean;
}

/** The text right after `label` on line `i`, then the next segments, then the segment below. */
export function valuesAfterLabel(lines: Line[], i: number, label: RegExp): Found[] {
  const line = lines[i];
  const out: Found[] = [];
  const segIndex = line.segments.findIndex((s) => label.test(s.text));
  if (segIndex < 0) return out;
  const seg = line.segments[segIndex];
  const m = label.exec(seg.text)!;
  const rest = seg.text.slice(m.index + m[0].length).replace(/^[\s:.#№]+/u, '').trim();
  if (rest) out.push({ text: rest, line: i, inline: true });
  // Right of the label up to the next label: in a row of labels ("Number | Date | Due") each label's
  // value is below it, not the next label's.
  for (const next of line.segments.slice(segIndex + 1)) {
    if (isBareLabel(next.text)) break;
    out.push({ text: next.text, line: i, inline: true });
  }
  const below = valueBelow(lines, i, segIndex, label);
  if (below) out.push({ text: below, line: i + 1, inline: false });
  return out;
}

/**
 * The value under label segment `k` of line `i`: the words of the next line whose centre lies in the
 * label's column, from the label's first word to the next word on its line (a row of labels over a row
 * of values: "Number | Date | Due" above "2026-7 12.03.2026 26.03.2026", however narrow the gaps, and
 * whichever segments the reader cut them into). Without word boxes, the segment below that overlaps
 * the label most.
 */
function valueBelow(lines: Line[], i: number, k: number, label: RegExp): string | undefined {
  const seg = lines[i].segments[k];
  const next = lines[i + 1];
  const words = lines[i].segments.flatMap((s) => s.words ?? []);
  if (!next || next.page !== lines[i].page || !seg.words || words.length !== lines[i].segments.reduce((n, s) => n + (s.words ? s.words.length : NaN), 0)) {
    return segmentBelow(lines, i, seg)?.text;
  }
  // The label's words within its segment, by character offsets ("Leistungsdatum Fällig": the second word).
  const m = label.exec(seg.text)!;
  let offset = 0;
  let first = -1;
  let last = -1;
  seg.words.forEach((w, n) => {
    const start = seg.text.indexOf(w.text, offset);
    const end = start + w.text.length;
    if (first < 0 && end > m.index) first = n;
    if (start < m.index + m[0].length) last = n;
    offset = end;
  });
  if (first < 0) return segmentBelow(lines, i, seg)?.text;
  const labelFirst = seg.words[first];
  const at = words.indexOf(labelFirst);
  const after = words[words.indexOf(seg.words[Math.max(first, last)]) + 1];
  const before = words[at - 1];
  const left = before ? (before.x1 + labelFirst.x0) / 2 : -1;
  const right = after ? after.x0 - 0.005 : 2;
  const below = next.segments.flatMap((s) => s.words ?? []);
  const own = below.filter((w) => (w.x0 + w.x1) / 2 >= left && (w.x0 + w.x1) / 2 < right && (!before || w.x1 > labelFirst.x0 - 0.01));
  return own.length ? own.map((w) => w.text).join(' ') : undefined;
}

/** The segment on the next line that overlaps `seg` horizontally the most (a row of narrow labels over
 * wider values: the value under a label may also touch its neighbour's). */
export function segmentBelow(lines: Line[], i: number, seg: Segment): Segment | undefined {
  const next = lines[i + 1];
  if (!next || next.page !== lines[i].page) return undefined;
  const overlap = (s: Segment) => Math.min(s.x1, seg.x1 + 0.02) - Math.max(s.x0, seg.x0 - 0.02);
  return next.segments.filter((s) => overlap(s) > 0).sort((a, b) => overlap(b) - overlap(a))[0];
}

/** The lines of a block (supplier, customer) under its label, in the label's column, up to a blank
 * gap or another label. Returns the block's text lines (label line's rest included). */
export interface BlockLine {
  text: string;
  line: number;
  /** The block's own segments of that line (its column only). */
  segments: Segment[];
}

export function blockBelow(lines: Line[], i: number, label: RegExp, stop: RegExp, maxLines = 8): BlockLine[] {
  const line = lines[i];
  const seg = line.segments.find((s) => label.test(s.text));
  if (!seg) return [];
  const out: BlockLine[] = [];
  const m = label.exec(seg.text)!;
  const rest = seg.text.slice(m.index + m[0].length).replace(/^[\s:]+/, '').trim();
  if (rest) out.push({ text: rest, line: i, segments: [{ ...seg, text: rest }] });
  // The column of the block: from the label's left edge to the next segment on the label line.
  const labelIndex = line.segments.indexOf(seg);
  const right = line.segments[labelIndex + 1]?.x0 ?? 1.01;
  const left = seg.x0 - 0.03;
  let skipped = 0;
  for (let j = i + 1; j < lines.length && j <= i + maxLines + skipped && lines[j].page === line.page; j++) {
    const inColumn = lines[j].segments.filter((s) => s.x0 >= left && s.x0 < right - 0.01);
    if (inColumn.length === 0) {
      // A row of the other column only (its lines interleave with the block's): not the block's end.
      // A segment reaching into the column (a full-width table, a heading) is.
      const crosses = lines[j].segments.some((s) => s.x1 > left && s.x0 < right - 0.01);
      if (!crosses && skipped < 4) {
        skipped++;
        continue;
      }
      if (out.length > 0) break;
      continue;
    }
    const text = inColumn.map((s) => s.text).join('  ');
    if (stop.test(text) && !label.test(text)) break;
    out.push({ text, line: j, segments: inColumn });
  }
  return out;
}
