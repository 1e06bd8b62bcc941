// The one pagination helper: keyset cursors over (sort key…, id) descending.
// A cursor is base64url(JSON) + HMAC, bound to the list's filters, so a client can neither forge one nor
// reuse it with other filters (both give 422 invalid_cursor).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fail } from './errors';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

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

  /** Validates size and token; `filterKey` names the list and its filters (e.g. "contacts|q=acme"). */
  resolve(page: PageInput | undefined, filterKey: string): ResolvedPage {
    const size = page?.page_size ?? 0;
    if (!Number.isInteger(size) || size < 0 || size > MAX_PAGE_SIZE) {
      throw fail.invalid('invalid_limit', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`, 'limit');
    }
    const limit = size === 0 ? DEFAULT_PAGE_SIZE : size;
    const token = page?.page_token ?? '';
    if (!token) return { limit };
    const [body, sig] = token.split('.');
    const valid = body && sig && sig.length === 22 && timingSafeEqual(Buffer.from(sig), Buffer.from(this.sign(body)));
    if (!valid) throw fail.invalid('invalid_cursor', 'cursor is malformed or was not issued by this API', 'cursor');
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { a: Keyset; f: string };
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
