// The headers of a file download (docs/edge.md "Downloads"). Content-Disposition with a file name
// (RFC 6266): an ASCII `filename` every client understands and, when the name is not plain ASCII, the
// exact name as `filename*=UTF-8''…` (RFC 8187), which browsers prefer — the name without the invisible
// characters no stored name may have either (bidi overrides, controls: services/shared/validation.ts).
// Every download says `nosniff`; one shown inline (`?disposition=inline`) is sandboxed by CSP, so a file
// a browser displays runs no script and reaches no origin, whatever is inside it.
import { withoutInvisible } from '../../services/shared/validation';

export type Disposition = 'attachment' | 'inline';

/** The name a header carries when nothing visible is left of the stored one. */
const FALLBACK_NAME = 'download';

/** RFC 8187 value-chars: encodeURIComponent leaves ' ( ) * unescaped; attr-char does not allow them. */
const rfc8187 = (value: string) => encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** "Faktúra 1.pdf" → "Faktura 1.pdf": diacritics dropped, anything else outside printable ASCII → "_". */
export function asciiFileName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\]/g, '_');
}

export function contentDisposition(type: Disposition, fileName: string): string {
  const name = withoutInvisible(fileName).trim() || FALLBACK_NAME;
  const ascii = asciiFileName(name);
  const header = `${type}; filename="${ascii}"`;
  return ascii === name ? header : `${header}; filename*=UTF-8''${rfc8187(name)}`;
}

/** `?disposition=`: only the exact value "inline" displays in the browser; anything else downloads. */
export const dispositionOf = (value: unknown): Disposition => (value === 'inline' ? 'inline' : 'attachment');

/** The headers every file download carries (PDFs of documents, expense files), set in this one place. */
export function downloadHeaders(type: Disposition, fileName: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-disposition': contentDisposition(type, fileName), 'x-content-type-options': 'nosniff' };
  if (type === 'inline') headers['content-security-policy'] = 'sandbox';
  return headers;
}
