// Which images a workspace logo may be: recognised by their magic bytes, not by what a client claims.
import { fail } from '../../shared/errors';

export const MAX_LOGO_BYTES = 1024 * 1024;

const SIGNATURES: Array<{ type: string; ext: string; test: (b: Uint8Array) => boolean }> = [
  { type: 'image/png', ext: 'png', test: (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 },
  { type: 'image/jpeg', ext: 'jpg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', ext: 'gif', test: (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38 },
  {
    type: 'image/webp',
    ext: 'webp',
    test: (b) => String.fromCharCode(...b.slice(0, 4)) === 'RIFF' && String.fromCharCode(...b.slice(8, 12)) === 'WEBP',
  },
];

export function logoType(data: Uint8Array): { type: string; ext: string } {
  if (data.length > MAX_LOGO_BYTES) throw fail.invalid('file_too_large', 'a logo may be at most 1 MiB', 'data');
  const match = SIGNATURES.find((s) => data.length >= 12 && s.test(data));
  if (!match) throw fail.invalid('unsupported_media_type', 'a logo must be a PNG, JPEG, GIF or WebP image', 'data');
  return match;
}
