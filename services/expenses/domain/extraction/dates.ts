// Dates as printed in sk, cs, en and de — "12. 3. 2026", "12.03.2026", "2026-03-12", "12/03/2026",
// "March 12, 2026", "12 March 2026", "12. März 2026", "12. marca 2026" — read into ISO dates.

const MONTHS: Record<string, number> = {};
const names: [number, string[]][] = [
  [1, ['january', 'jan', 'januar', 'jänner', 'januára', 'januar', 'ledna', 'leden', 'január']],
  [2, ['february', 'feb', 'februar', 'februára', 'února', 'únor', 'február']],
  [3, ['march', 'mar', 'märz', 'marz', 'marca', 'března', 'březen', 'marec']],
  [4, ['april', 'apr', 'apríla', 'dubna', 'duben', 'apríl']],
  [5, ['may', 'mai', 'mája', 'května', 'květen', 'máj']],
  [6, ['june', 'jun', 'juni', 'júna', 'června', 'červen', 'jún']],
  [7, ['july', 'jul', 'juli', 'júla', 'července', 'červenec', 'júl']],
  [8, ['august', 'aug', 'augusta', 'srpna', 'srpen']],
  [9, ['september', 'sep', 'sept', 'septembra', 'září']],
  [10, ['october', 'oct', 'oktober', 'okt', 'októbra', 'října', 'říjen', 'október']],
  [11, ['november', 'nov', 'novembra', 'listopadu', 'listopad']],
  [12, ['december', 'dec', 'dezember', 'dez', 'decembra', 'prosince', 'prosinec']],
];
for (const [n, list] of names) for (const name of list) MONTHS[name] = n;
const MONTH_WORD = '([A-Za-zÀ-žäöüÄÖÜß]{3,10})\\.?';

export interface DateToken {
  iso: string;
  index: number;
  raw: string;
}

function iso(y: number, m: number, d: number): string | null {
  if (y < 100) y += 2000;
  if (m < 1 || m > 12 || d < 1 || d > 31) return null;
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCMonth() !== m - 1) return null; // 31 April
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

const PATTERNS: { re: RegExp; read(m: RegExpExecArray): string | null }[] = [
  // 2026-03-12
  { re: /(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)/g, read: (m) => iso(+m[1], +m[2], +m[3]) },
  // 12. 3. 2026 / 12.03.2026 / 12.3.26
  { re: /(?<![\d.])(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4}|\d{2})(?![\d])/g, read: (m) => iso(+m[3], +m[2], +m[1]) },
  // 12/03/2026 (day first, as in every language here; month first only when the day cannot be a month)
  {
    re: /(?<![\d/])(\d{1,2})\/(\d{1,2})\/(\d{4})(?![\d/])/g,
    read: (m) => (+m[2] > 12 && +m[1] <= 12 ? iso(+m[3], +m[1], +m[2]) : iso(+m[3], +m[2], +m[1])),
  },
  // March 12, 2026
  { re: new RegExp(`(?<![\\wÀ-ž])${MONTH_WORD}\\s+(\\d{1,2}),?\\s+(\\d{4})(?!\\d)`, 'g'), read: (m) => (MONTHS[m[1].toLowerCase()] ? iso(+m[3], MONTHS[m[1].toLowerCase()], +m[2]) : null) },
  // 12 March 2026, 12. März 2026, 12. marca 2026
  { re: new RegExp(`(?<!\\d)(\\d{1,2})\\.?\\s+${MONTH_WORD}\\s+(\\d{4})(?!\\d)`, 'g'), read: (m) => (MONTHS[m[2].toLowerCase()] ? iso(+m[3], MONTHS[m[2].toLowerCase()], +m[1]) : null) },
];

/** Reads one printed date; null when it is none. */
export function parseDate(text: string): string | null {
  return findDates(text)[0]?.iso ?? null;
}

/** Every date of a line, left to right. */
export function findDates(text: string): DateToken[] {
  const out: DateToken[] = [];
  for (const { re, read } of PATTERNS) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const value = read(m);
      if (value && !out.some((o) => m!.index < o.index + o.raw.length && o.index < m!.index + m![0].length)) {
        out.push({ iso: value, index: m.index, raw: m[0] });
      }
    }
  }
  return out.sort((a, b) => a.index - b.index);
}

/** A date an invoice can carry: not before 2000, not more than two years ahead of `now`. */
export function plausibleDate(isoDate: string, now = new Date()): boolean {
  const year = Number(isoDate.slice(0, 4));
  return year >= 2000 && year <= now.getUTCFullYear() + 2;
}
