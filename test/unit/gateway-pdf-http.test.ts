// The gateway's HTTP side of PDFs: Content-Disposition (RFC 6266 / RFC 8187) and the 503 of an
// unavailable renderer (Retry-After from the service's error detail).
import { status } from '@grpc/grpc-js';
import { contentDisposition, dispositionOf, downloadHeaders } from '../../gateway/http/content-disposition';
import { httpErrorFromRemote } from '../../gateway/http/errors';
import { RemoteCallError } from '../../services/shared/grpc/errors';

describe('Content-Disposition', () => {
  it('an ASCII name: filename only', () => {
    expect(contentDisposition('attachment', 'Invoice 2026000001.pdf')).toBe('attachment; filename="Invoice 2026000001.pdf"');
    expect(contentDisposition('inline', 'Invoice 1.pdf')).toBe('inline; filename="Invoice 1.pdf"');
  });

  it('a non-ASCII name: an ASCII fallback and filename*=UTF-8 with the exact name', () => {
    expect(contentDisposition('attachment', 'Faktúra 2026000001.pdf')).toBe(
      `attachment; filename="Faktura 2026000001.pdf"; filename*=UTF-8''Fakt%C3%BAra%202026000001.pdf`,
    );
    expect(contentDisposition('attachment', 'Opravný daňový doklad 1.pdf')).toBe(
      `attachment; filename="Opravny danovy doklad 1.pdf"; filename*=UTF-8''Opravn%C3%BD%20da%C5%88ov%C3%BD%20doklad%201.pdf`,
    );
  });

  it('quotes, backslashes and characters without an ASCII form never break the header', () => {
    const header = contentDisposition('attachment', 'a"b\\c 請求書 (1)*.pdf');
    expect(header).toBe(`attachment; filename="a_b_c ___ (1)*.pdf"; filename*=UTF-8''a%22b%5Cc%20%E8%AB%8B%E6%B1%82%E6%9B%B8%20%281%29%2A.pdf`);
    expect(header).not.toMatch(/[\r\n]/);
  });
});

describe('File names in Content-Disposition: no invisible characters', () => {
  it('bidi overrides and isolates, zero-width characters, C0 and C1 controls are dropped from both forms', () => {
    expect(contentDisposition('attachment', 'invoice\u202Efdp.html')).toBe('attachment; filename="invoicefdp.html"');
    expect(contentDisposition('inline', 'Faktúra\u2066\u200B\u0085\u0007 1\u2069.pdf')).toBe(
      `inline; filename="Faktura 1.pdf"; filename*=UTF-8''Fakt%C3%BAra%201.pdf`,
    );
  });

  it('a name with nothing visible left gets a default', () => {
    expect(contentDisposition('attachment', '\u202E\u200F')).toBe('attachment; filename="download"');
  });
});

describe('Download headers', () => {
  it('every download: nosniff; shown inline: also Content-Security-Policy: sandbox', () => {
    expect(downloadHeaders('attachment', 'a.pdf')).toEqual({ 'content-disposition': 'attachment; filename="a.pdf"', 'x-content-type-options': 'nosniff' });
    expect(downloadHeaders('inline', 'a.pdf')).toEqual({
      'content-disposition': 'inline; filename="a.pdf"',
      'x-content-type-options': 'nosniff',
      'content-security-policy': 'sandbox',
    });
  });

  it('only the exact value "inline" displays inline', () => {
    expect(dispositionOf('inline')).toBe('inline');
    for (const other of ['INLINE', 'inline ', '', undefined, ['inline']]) expect(dispositionOf(other)).toBe('attachment');
  });
});

describe('503 from a service', () => {
  const remote = (code: string, message: string, metadata: Record<string, string> = {}) =>
    new RemoteCallError(status.UNAVAILABLE, { code, message, field: '', metadata });

  it('carries the service\'s Retry-After, code and message', () => {
    const err = httpErrorFromRemote(remote('renderer_overloaded', 'too many PDFs are being rendered; retry later', { retry_after_seconds: '2' }), 'https://x');
    expect(err).toMatchObject({ status: 503, code: 'renderer_overloaded', message: 'too many PDFs are being rendered; retry later', headers: { 'retry-after': '2' } });
  });

  it('an unreachable service: Retry-After 1 and a generic message', () => {
    const err = httpErrorFromRemote(remote('service_unavailable', 'No connection established. Last error: connect ECONNREFUSED'), 'https://x');
    expect(err).toMatchObject({ status: 503, code: 'service_unavailable', message: 'a service is unavailable; retry later', headers: { 'retry-after': '1' } });
  });
});
