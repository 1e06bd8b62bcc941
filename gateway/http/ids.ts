import { HttpError } from './errors';

/** Path ids are positive integers up to 2^53-1; anything else cannot name a record (404). */
export function pathId(raw: string | undefined, what = 'resource'): number {
  if (!raw || !/^[1-9]\d{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new HttpError(404, 'resource_not_found', `${what} not found`);
  }
  return Number(raw);
}

/** `limit` query parameter: an integer; its range is checked by the service's pagination helper. */
export function pageQuery(query: Record<string, unknown>): { page_size: number; page_token: string } {
  const limit = query.limit;
  const cursor = query.cursor;
  if (limit !== undefined && (typeof limit !== 'string' || !/^\d{1,6}$/.test(limit) || Number(limit) === 0)) {
    throw new HttpError(422, 'invalid_limit', 'limit must be an integer from 1 to 100', { field: 'limit' });
  }
  if (cursor !== undefined && typeof cursor !== 'string') {
    throw new HttpError(422, 'invalid_cursor', 'cursor must be a string', { field: 'cursor' });
  }
  return { page_size: limit === undefined ? 0 : Number(limit), page_token: cursor ?? '' };
}

export function listEnvelope<T>(data: T[], pageInfo: { next_page_token: string; has_more: boolean } | undefined) {
  return { data, next_cursor: pageInfo?.next_page_token || null, has_more: pageInfo?.has_more ?? false };
}
