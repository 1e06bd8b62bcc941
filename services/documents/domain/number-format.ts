// Document number formats, configurable per workspace (default YYYYNNNNNN → "2026000001").
// Tokens: YYYY (four-digit year), YY (two-digit year), a run of N (the counter, zero-padded to the
// run's length, longer when it outgrows it). A backslash makes the next character literal ("\N").
// Every other character is literal. A format needs exactly one counter and one year token, because
// sequences restart every year and numbers must stay unique.
import { fail } from '../../shared/errors';

export const DEFAULT_NUMBER_FORMAT = 'YYYYNNNNNN';

type Token = { kind: 'literal'; text: string } | { kind: 'year4' } | { kind: 'year2' } | { kind: 'counter'; width: number };

function tokenize(format: string): Token[] {
  const tokens: Token[] = [];
  const literal = (ch: string) => {
    const last = tokens[tokens.length - 1];
    if (last?.kind === 'literal') last.text += ch;
    else tokens.push({ kind: 'literal', text: ch });
  };
  for (let i = 0; i < format.length; ) {
    if (format[i] === '\\' && i + 1 < format.length) {
      literal(format[i + 1]);
      i += 2;
    } else if (format.startsWith('YYYY', i)) {
      tokens.push({ kind: 'year4' });
      i += 4;
    } else if (format.startsWith('YY', i)) {
      tokens.push({ kind: 'year2' });
      i += 2;
    } else if (format[i] === 'N') {
      let width = 0;
      while (format[i] === 'N') {
        width++;
        i++;
      }
      tokens.push({ kind: 'counter', width });
    } else {
      literal(format[i]);
      i++;
    }
  }
  return tokens;
}

export function validateNumberFormat(format: string, field = 'number_format'): string {
  const invalid = (message: string) => fail.invalid('invalid_number_format', `${field}: ${message}`, field);
  if (format.length === 0 || format.length > 40) throw invalid('must be 1 to 40 characters');
  if (!/^[A-Za-z0-9/_.#\\-]+$/.test(format)) throw invalid('may contain letters, digits and / _ . # - only');
  const tokens = tokenize(format);
  const counters = tokens.filter((t) => t.kind === 'counter');
  if (counters.length !== 1) throw invalid('needs exactly one run of N (the counter); write a literal N as \\N');
  if ((counters[0] as { width: number }).width > 12) throw invalid('the counter has at most 12 digits');
  if (!tokens.some((t) => t.kind === 'year4' || t.kind === 'year2')) throw invalid('needs the year (YYYY or YY): numbering restarts every year');
  return format;
}

export function formatNumber(format: string, year: number, counter: number): string {
  return tokenize(format)
    .map((t) => {
      switch (t.kind) {
        case 'literal':
          return t.text;
        case 'year4':
          return String(year).padStart(4, '0');
        case 'year2':
          return String(year % 100).padStart(2, '0');
        case 'counter':
          return String(counter).padStart(t.width, '0');
      }
    })
    .join('');
}
