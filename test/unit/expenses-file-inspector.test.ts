// The upload check (services/expenses/adapters/file-inspector.ts): spec §4 "Upload" and §8 — type
// sniffed from the bytes, declared type must match, structure walked as the chunks stream past.
import { fileInspector } from '../../services/expenses/adapters/file-inspector';
import { MAX_UPLOAD_BYTES } from '../../services/expenses/ports/file-inspector';
import { fakePdf, imageFile, pdfFile, truncated } from '../support/expense-files';

/** Feeds the file in chunks of `size` bytes (1 byte exercises every boundary). */
async function inspect(file: Buffer, declared: string | null, size = 997) {
  const inspection = fileInspector.inspect(declared);
  for (let at = 0; at < file.length; at += size) await inspection.push(file.subarray(at, at + size));
  return inspection.end();
}

const code = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (err: { code?: string }) => err.code,
  );

describe('valid files of the four allowed types pass, in any chunking, and report the sniffed type and size', () => {
  it.each([
    ['application/pdf', () => pdfFile()],
    ['application/pdf', () => pdfFile('classic xref table', { objectStreams: false })],
    ['image/png', () => imageFile('png')],
    ['image/jpeg', () => imageFile('jpeg')],
    ['image/gif', () => imageFile('gif')],
  ])('%s', async (type, make) => {
    const file = await make();
    for (const size of [1, 7, 4096, file.length]) {
      expect(await inspect(file, type, size)).toEqual({ contentType: type, size: file.length });
    }
    expect(await inspect(file, null)).toEqual({ contentType: type, size: file.length });
  });

  it('a declared type with parameters, in another case, or an alias (image/jpg) counts as declared', async () => {
    expect((await inspect(await imageFile('jpeg'), 'image/jpg')).contentType).toBe('image/jpeg');
    expect((await inspect(await pdfFile(), 'Application/PDF; name=x.pdf')).contentType).toBe('application/pdf');
  });

  it('application/octet-stream declares nothing: the sniffed type is taken', async () => {
    expect((await inspect(await imageFile('png'), 'application/octet-stream')).contentType).toBe('image/png');
  });
});

describe('refusals (422 codes)', () => {
  it('file_empty', async () => {
    expect(await code(inspect(Buffer.alloc(0), 'application/pdf'))).toBe('file_empty');
  });

  it('file_too_large: refused at the first byte past 10 MB, before the rest is read', async () => {
    const inspection = fileInspector.inspect('application/pdf');
    const head = await pdfFile();
    await inspection.push(head);
    const chunk = Buffer.alloc(1024 * 1024);
    let pushed = head.length;
    let refused: string | undefined;
    while (!refused) {
      refused = await code(inspection.push(chunk)).then((c) => (c === 'accepted' ? undefined : c));
      if (!refused) pushed += chunk.length;
    }
    expect(refused).toBe('file_too_large');
    expect(pushed).toBeLessThanOrEqual(MAX_UPLOAD_BYTES);
  });

  it('file_type_not_allowed for other types, recognised or not', async () => {
    const webp = await (await import('sharp')).default({ create: { width: 8, height: 8, channels: 3, background: '#fff' } }).webp().toBuffer();
    expect(await code(inspect(webp, 'image/webp'))).toBe('file_type_not_allowed');
    expect(await code(inspect(Buffer.from('just some text, no magic'), 'text/plain'))).toBe('file_type_not_allowed');
    expect(await code(inspect(Buffer.from('PK\x03\x04' + 'x'.repeat(100)), null))).toBe('file_type_not_allowed');
  });

  it('file_type_mismatch when the declared type is another allowed (or any other) type', async () => {
    expect(await code(inspect(await pdfFile(), 'image/png'))).toBe('file_type_mismatch');
    expect(await code(inspect(await imageFile('png'), 'image/jpeg'))).toBe('file_type_mismatch');
    expect(await code(inspect(await imageFile('gif'), 'text/plain'))).toBe('file_type_mismatch');
  });

  it.each([
    ['a %PDF- header with nothing valid behind', async () => fakePdf(), 'application/pdf'],
    ['a truncated PDF', async () => truncated(await pdfFile()), 'application/pdf'],
    ['a PDF whose startxref points nowhere', async () => Buffer.from((await pdfFile()).toString('latin1').replace(/startxref\s+\d+/, 'startxref\n9'), 'latin1'), 'application/pdf'],
    ['a truncated PNG', async () => truncated(await imageFile('png')), 'image/png'],
    ['a PNG with a flipped byte (CRC)', async () => flip(await imageFile('png'), 100), 'image/png'],
    ['a truncated JPEG', async () => truncated(await imageFile('jpeg')), 'image/jpeg'],
    ['a truncated GIF', async () => truncated(await imageFile('gif')), 'image/gif'],
  ])('file_corrupt: %s', async (_what, make, type) => {
    const file = await make();
    expect(await code(inspect(file, type))).toBe('file_corrupt');
    expect(await code(inspect(file, type, 1))).toBe('file_corrupt');
  });
});

function flip(file: Buffer, at: number): Buffer {
  const copy = Buffer.from(file);
  copy[at] ^= 0xff;
  return copy;
}
