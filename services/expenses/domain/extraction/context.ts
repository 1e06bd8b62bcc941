// Finding the value that belongs to a label: after it in the same segment, in the next segment of the
// same line, or in the segment below it (forms print the value under the label).
import { Line, Segment } from './layout';

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
  for (const next of line.segments.slice(segIndex + 1)) out.push({ text: next.text, line: i, inline: true });
  const below = segmentBelow(lines, i, seg);
  if (below) out.push({ text: below.text, line: i + 1, inline: false });
  return out;
}

/** The segment on the next line that overlaps `seg` horizontally. */
export function segmentBelow(lines: Line[], i: number, seg: Segment): Segment | undefined {
  const next = lines[i + 1];
  if (!next || next.page !== lines[i].page) return undefined;
  return next.segments.find((s) => s.x0 < seg.x1 + 0.02 && s.x1 > seg.x0 - 0.02);
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
  for (let j = i + 1; j < lines.length && j <= i + maxLines && lines[j].page === line.page; j++) {
    const inColumn = lines[j].segments.filter((s) => s.x0 >= left && s.x0 < right - 0.01);
    if (inColumn.length === 0) {
      if (out.length > 0) break;
      continue;
    }
    const text = inColumn.map((s) => s.text).join('  ');
    if (stop.test(text) && !label.test(text)) break;
    out.push({ text, line: j, segments: inColumn });
  }
  return out;
}
