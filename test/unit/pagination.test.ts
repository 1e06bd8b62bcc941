import { DomainError } from '../../services/shared/errors';
import { CursorCodec } from '../../services/shared/pagination';

const codec = new CursorCodec('a-test-secret-of-enough-length');

describe('keyset pagination helper', () => {
  it('defaults to 25 and refuses limits outside 1..100', () => {
    expect(codec.resolve(undefined, 'k').limit).toBe(25);
    expect(codec.resolve({ page_size: 100 }, 'k').limit).toBe(100);
    expect(() => codec.resolve({ page_size: 101 }, 'k')).toThrow(DomainError);
    expect(() => codec.resolve({ page_size: -1 }, 'k')).toThrow(DomainError);
  });

  it('round-trips a keyset through an opaque, signed cursor', () => {
    const rows = [{ id: 9 }, { id: 7 }, { id: 4 }];
    const { items, page_info } = codec.page(rows, 2, (r) => [r.id], 'k');
    expect(items).toEqual([{ id: 9 }, { id: 7 }]);
    expect(page_info.has_more).toBe(true);
    expect(codec.resolve({ page_token: page_info.next_page_token }, 'k').after).toEqual([7]);
  });

  it('refuses tampered cursors, cursors of other filters and cursors signed with another secret', () => {
    const token = codec.encode([7], 'contacts|q=a');
    const flipped = token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect(() => codec.resolve({ page_token: flipped }, 'contacts|q=a')).toThrow(/cursor/);
    expect(() => codec.resolve({ page_token: token }, 'contacts|q=b')).toThrow(/different/);
    const foreign = new CursorCodec('another-secret-entirely-123').encode([7], 'contacts|q=a');
    expect(() => codec.resolve({ page_token: foreign }, 'contacts|q=a')).toThrow(/cursor/);
  });

  it('refuses every cursor it did not issue with invalid_cursor, never another error', () => {
    const token = codec.encode([7], 'k');
    const [body, sig] = token.split('.');
    const forged = [
      'garbage',
      '.',
      `${body}.`,
      `.${sig}`,
      token.slice(0, -1), // truncated
      `${token}.extra`,
      `${body}.${'é'.repeat(22)}`, // 22 characters, 44 bytes: the length check once passed on characters
      `${body}.${'😀'.repeat(11)}`,
      `${body}.${sig.slice(0, 21)}é`,
      `${'€'.repeat(30)}.${sig}`,
      Buffer.from(JSON.stringify({ a: [7], f: 'k' })).toString('base64') + '.' + sig, // plain base64, unsigned
      `${'A'.repeat(100_000)}.${sig}`, // huge
      token.replace('.', '%2E'),
    ];
    for (const cursor of forged) {
      let thrown: unknown;
      try {
        codec.resolve({ page_token: cursor }, 'k');
      } catch (err) {
        thrown = err;
      }
      expect([cursor.slice(0, 40), thrown instanceof DomainError && (thrown as DomainError).code]).toEqual([cursor.slice(0, 40), 'invalid_cursor']);
    }
  });

  it('reports the last page without a cursor', () => {
    const { page_info } = codec.page([{ id: 1 }], 2, (r) => [r.id], 'k');
    expect(page_info).toEqual({ has_more: false, next_page_token: '' });
  });
});
