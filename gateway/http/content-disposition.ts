// Content-Disposition with a file name (RFC 6266): an ASCII `filename` every client understands and,
// when the name is not plain ASCII, the exact name as `filename*=UTF-8''…` (RFC 8187), which
// browsers prefer.
export type Disposition = 'attachment' | 'inline';

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
  const ascii = asciiFileName(fileName);
  const header = `${type}; filename="${ascii}"`;
  return ascii === fileName ? header : `${header}; filename*=UTF-8''${rfc8187(fileName)}`;
}
