// The upload type rule (services/shared/file-types.ts): one implementation, applied by the gateway on an
// upload's first bytes and by the expenses service on what it stores (docs/edge.md "Uploads").
import { judgeFileType, SNIFF_BYTES } from '../../services/shared/file-types';
import { imageFile, pdfFile } from '../support/expense-files';

describe('judgeFileType: the type of an upload from its first bytes', () => {
  it('accepts the four types, declared canonically, by an alias, as application/octet-stream or not at all', async () => {
    const pdf = await pdfFile();
    for (const declared of ['application/pdf', 'application/x-pdf', 'application/pdf; charset=binary', 'application/octet-stream', null]) {
      expect(await judgeFileType(pdf, declared)).toEqual({ accepted: true, type: 'application/pdf' });
    }
    expect(await judgeFileType(await imageFile('jpeg'), 'image/jpg')).toEqual({ accepted: true, type: 'image/jpeg' });
    expect(await judgeFileType(await imageFile('png'), 'IMAGE/PNG')).toEqual({ accepted: true, type: 'image/png' });
    expect(await judgeFileType(await imageFile('gif'), 'image/gif')).toEqual({ accepted: true, type: 'image/gif' });
  });

  it('file_type_not_allowed for bytes of no allowed type (zeros, text, HTML), whatever was declared', async () => {
    for (const bytes of [Buffer.alloc(SNIFF_BYTES), Buffer.from('hello'), Buffer.from('<!doctype html><script>alert(1)</script>')]) {
      expect(await judgeFileType(bytes, 'application/pdf')).toMatchObject({ accepted: false, code: 'file_type_not_allowed' });
    }
  });

  it('file_type_mismatch when the bytes are an allowed type other than the declared one', async () => {
    expect(await judgeFileType(await imageFile('png'), 'application/pdf')).toEqual({
      accepted: false,
      code: 'file_type_mismatch',
      message: 'the file was declared as application/pdf but its content is image/png',
    });
    // RFC 7578: a part without Content-Type is text/plain, which no allowed file is.
    expect(await judgeFileType(await pdfFile(), 'text/plain')).toMatchObject({ code: 'file_type_mismatch' });
  });

  it('decides on the first SNIFF_BYTES: what follows them does not change the verdict', async () => {
    const png = await imageFile('png', 256);
    const head = png.subarray(0, SNIFF_BYTES);
    expect(await judgeFileType(Buffer.concat([head, Buffer.alloc(1024 * 1024)]), 'image/png')).toEqual(await judgeFileType(head, 'image/png'));
  });
});
