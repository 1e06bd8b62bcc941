// The gateway's HTTP side of PDFs: Content-Disposition (RFC 6266 / RFC 8187) and the 503 of an
// unavailable renderer (Retry-After from the service's error detail).
import { status } from '@grpc/grpc-js';
import { contentDisposition } from '../../gateway/http/content-disposition';
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
