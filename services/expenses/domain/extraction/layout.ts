// The text of a document as the parsers see it, whichever way it was read (PDF text layer or OCR):
// pages of lines top to bottom, each line a row of segments left to right. A segment is a run of
// words without a wide gap, so table columns and side-by-side blocks (supplier | customer) stay apart.

export interface Segment {
  text: string;
  /** Left and right edge as a fraction of the page width (0…1). */
  x0: number;
  x1: number;
  /** Its words' texts and edges (same unit), when the reader had boxes: values under a row of labels
   * are told apart by the words' positions even when their gaps are too narrow to split the segment. */
  words?: { text: string; x0: number; x1: number }[];
}

export interface Line {
  page: number;
  segments: Segment[];
  /** The segments joined by two spaces. */
  text: string;
}

export interface Word {
  text: string;
  x0: number;
  x1: number;
  /** Baseline or vertical centre, any unit shared by the page's words. */
  y: number;
  height: number;
}

/** Groups the words of one page into lines (by vertical position) and segments (by horizontal gaps). */
export function linesFromWords(words: Word[], page: number, pageWidth: number): Line[] {
  const sorted = words.filter((w) => w.text.trim() !== '').sort((a, b) => a.y - b.y || a.x0 - b.x0);
  const rows: Word[][] = [];
  for (const word of sorted) {
    const row = rows[rows.length - 1];
    const tolerance = Math.max(2, 0.5 * Math.max(word.height, row ? row[0].height : 0));
    if (row && Math.abs(row[0].y - word.y) <= tolerance) row.push(word);
    else rows.push([word]);
  }
  return rows.map((row) => {
    row.sort((a, b) => a.x0 - b.x0);
    const segments: Segment[] = [];
    let current: { words: Word[] } | undefined;
    for (const word of row) {
      const last = current?.words[current.words.length - 1];
      // A gap wider than ~1.6 character heights starts a new column.
      const gap = last ? word.x0 - last.x1 : Infinity;
      if (!current || gap > 1.6 * Math.max(word.height, last!.height)) {
        current = { words: [word] };
        segments.push(toSegment(current.words, pageWidth));
      } else {
        current.words.push(word);
        segments[segments.length - 1] = toSegment(current.words, pageWidth);
      }
    }
    return { page, segments, text: segments.map((s) => s.text).join('  ') };
  });
}

function toSegment(words: Word[], pageWidth: number): Segment {
  // Text-layer items split inside words (kerning) come with no gap; keep them together.
  const merged: { text: string; x0: number; x1: number }[] = [];
  for (let i = 0; i < words.length; i++) {
    const gap = i === 0 ? 0 : words[i].x0 - words[i - 1].x1;
    const last = merged[merged.length - 1];
    if (last && gap < 0.15 * words[i].height) {
      last.text += words[i].text;
      last.x1 = words[i].x1 / pageWidth;
    } else merged.push({ text: words[i].text, x0: words[i].x0 / pageWidth, x1: words[i].x1 / pageWidth });
  }
  return {
    text: merged.map((w) => w.text).join(' ').replace(/\s+/g, ' ').trim(),
    x0: words[0].x0 / pageWidth,
    x1: words[words.length - 1].x1 / pageWidth,
    words: merged,
  };
}

/** Plain lines (tests, the provider's answer): one segment per run separated by 2+ spaces. */
export function linesFromText(text: string, page = 1): Line[] {
  return text
    .split(/\r?\n/)
    .map((raw) => raw.replace(/\t/g, '    '))
    .filter((raw) => raw.trim() !== '')
    .map((raw) => {
      const width = Math.max(80, raw.length);
      const segments: Segment[] = [];
      for (const m of raw.matchAll(/\S+(?: \S+)*/g)) {
        segments.push({ text: m[0], x0: m.index! / width, x1: (m.index! + m[0].length) / width });
      }
      return { page, segments, text: segments.map((s) => s.text).join('  ') };
    });
}
