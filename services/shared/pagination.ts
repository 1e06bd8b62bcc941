// The one pagination helper: keyset cursors over (sort key…, id) descending.
// A cursor is base64url(JSON) + HMAC, bound to the list's filters, so a client can neither forge one nor
// reuse it with other filters (both give 422 invalid_cursor).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fail } from './errors';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/** base64url(JSON) "." 22 characters of base64url HMAC: the only shape encode() produces. */
const CURSOR_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/;
/** Far above any cursor encode() produces (a few sort values and a filter key), far below a DoS. */
const MAX_CURSOR_LENGTH = 2048;

export interface PageInput {
  page_size?: number;
  page_token?: string;
}

/** Position of the last row of a page: its sort values (if any) then its id. */
export type Keyset = Array<string | number>;

export interface ResolvedPage {
  limit: number;
  after?: Keyset;
}

export class CursorCodec {
  constructor(private readonly secret: string) {
    if (secret.length < 16) throw new Error('cursor secret must be at least 16 characters');
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url').slice(0, 22);
  }

  encode(after: Keyset, filterKey: string): string {
    const body = Buffer.from(JSON.stringify({ a: after, f: filterKey })).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /**
   * The keyset and filters of a cursor this API issued, else undefined. Anything else a client sends —
   * garbage, another encoding, multibyte text, a truncated or oversized token — is checked for its
   * exact shape first, so the signature comparison always sees two ASCII strings of equal length.
   */
  private verify(token: string): { a: Keyset; f: string } | undefined {
    if (token.length > MAX_CURSOR_LENGTH || !CURSOR_SHAPE.test(token)) return undefined;
    const [body, sig] = token.split('.');
    if (!timingSafeEqual(Buffer.from(sig, 'latin1'), Buffer.from(this.sign(body), 'latin1'))) return undefined;
    return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { a: Keyset; f: string };
  }

  /** Validates size and token; `filterKey` names the list and its filters (e.g. "contacts|q=acme"). */
  resolve(page: PageInput | undefined, filterKey: string): ResolvedPage {
    const size = page?.page_size ?? 0;
    if (!Number.isInteger(size) || size < 0 || size > MAX_PAGE_SIZE) {
      throw fail.invalid('invalid_limit', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`, 'limit');
    }
    const limit = size === 0 ? DEFAULT_PAGE_SIZE : size;
    const token = page?.page_token ?? '';
    if (!token) return { limit };
    const decoded = this.verify(token);
    if (!decoded) throw fail.invalid('invalid_cursor', 'cursor is malformed or was not issued by this API', 'cursor');
    if (decoded.f !== filterKey) {
      throw fail.invalid('invalid_cursor', 'cursor belongs to a different list or different filters', 'cursor');
    }
    return { limit, after: decoded.a };
  }

  /** Builds the page info from `limit + 1` fetched rows. */
  page<T>(rows: T[], limit: number, keyOf: (row: T) => Keyset, filterKey: string) {
    const hasMore = rows.length > limit;
    const items = hasMore ? rows.slice(0, limit) : rows;
    const last = items[items.length - 1];
    return {
      items,
      page_info: { has_more: hasMore, next_page_token: hasMore && last ? this.encode(keyOf(last), filterKey) : '' },
    };
  }
}
