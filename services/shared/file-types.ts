// What an uploaded file may be (spec §8), decided from its first bytes. The one rule, applied twice: by
// the gateway on an upload's first bytes (the early refusal: nothing more is read, docs/edge.md
// "Uploads") and by the expenses service on the stream it stores (defence in depth, docs/expenses.md
// "Upload"). The sniffing is file-type's, on the first SNIFF_BYTES bytes.
import { fileTypeFromBuffer } from 'file-type/core';

/** Spec §8: the only types an expense file may have. */
export const UPLOAD_TYPES = ['application/pdf', 'image/jpeg', 'image/png', 'image/gif'] as const;
export type UploadType = (typeof UPLOAD_TYPES)[number];

/** Spec §8: 10 MB (MiB) per file. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

/** file-type needs at most this many leading bytes to decide. */
export const SNIFF_BYTES = 4100;

/** Names clients use for the allowed types, besides the canonical one. */
const ALIASES: Record<string, UploadType> = { 'image/jpg': 'image/jpeg', 'image/pjpeg': 'image/jpeg', 'application/x-pdf': 'application/pdf' };

/** The declared type as a canonical media type; null when the client declared none (or only "some bytes"). */
export function declaredMediaType(declared: string | null): string | null {
  const type = (declared ?? '').split(';', 1)[0].trim().toLowerCase();
  if (type === '' || type === 'application/octet-stream') return null;
  return ALIASES[type] ?? type;
}

export type TypeVerdict =
  | { accepted: true; type: UploadType }
  | { accepted: false; code: 'file_type_not_allowed' | 'file_type_mismatch'; message: string };

/**
 * The verdict on a file's type from its first bytes (the first SNIFF_BYTES are read, or the whole file
 * when it is shorter) and the part's declared Content-Type: `file_type_not_allowed` when the bytes are
 * none of UPLOAD_TYPES, `file_type_mismatch` when they are, but not what was declared.
 */
export async function judgeFileType(head: Uint8Array, declaredType: string | null): Promise<TypeVerdict> {
  const sniffed = await sniff(head.subarray(0, SNIFF_BYTES));
  if (!sniffed || !(UPLOAD_TYPES as readonly string[]).includes(sniffed)) {
    const what = sniffed ? `is ${sniffed}` : 'is of no recognised type';
    return { accepted: false, code: 'file_type_not_allowed', message: `the file ${what}; allowed are ${UPLOAD_TYPES.join(', ')}` };
  }
  const type = sniffed as UploadType;
  const declared = declaredMediaType(declaredType);
  if (declared !== null && declared !== type) {
    return { accepted: false, code: 'file_type_mismatch', message: `the file was declared as ${declared} but its content is ${type}` };
  }
  return { accepted: true, type };
}

/** The sniffed media type; a parser that throws on hostile bytes means "no recognised type" (a 422, never a 500). */
async function sniff(head: Uint8Array): Promise<string | undefined> {
  try {
    return (await fileTypeFromBuffer(head))?.mime;
  } catch {
    return undefined;
  }
}
