// PDF inspection for tests: the extracted text (whitespace normalised: Intl separates digit groups with
// no-break spaces) and whether the fonts are embedded.
import { execFile } from 'node:child_process';
import path from 'node:path';

export async function pdfText(pdf: Buffer): Promise<string> {
  const out = await new Promise<string>((resolve, reject) => {
    const child = execFile(process.execPath, [path.join(__dirname, 'pdf-text.mjs')], { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    );
    child.stdin!.end(pdf);
  });
  return (JSON.parse(out) as { text: string }).text.replace(/[\s\u00a0\u202f]+/g, ' ');
}

/** Names of the fonts the PDF embeds (FontFile2 streams), read from the raw file. */
export function embeddedFonts(pdf: Buffer): string[] {
  const raw = pdf.toString('latin1');
  const names = [...raw.matchAll(/\/FontName\s*\/([A-Za-z0-9+_-]+)/g)].map((m) => m[1]);
  return raw.includes('/FontFile2') || raw.includes('/FontFile3') ? [...new Set(names)] : [];
}
