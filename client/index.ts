// The TypeScript client of the invoicing API: the paths, operations and schemas typed from the OpenAPI
// document (client/generated/api.d.ts, by `npm run gen:client`) over openapi-fetch, plus what a good API
// client adds — an Idempotency-Key for every POST kept across its retries, retries with exponential
// backoff and jitter (honouring Retry-After), a timeout per attempt, typed errors, cursor iteration.
// See client/README.md.
import createClient, { Client } from 'openapi-fetch';
import type { components, operations, paths } from './generated/api';
import { DEFAULT_RETRY, RetryPolicy } from './retry';
import { retryingFetch } from './transport';

export { InvoicingApiError, InvoicingConnectionError } from './errors';
export type { components, operations, paths };
export type Schemas = components['schemas'];

export interface InvoicingClientOptions {
  /** The API root, e.g. `http://127.0.0.1:3000/api/v1`. */
  baseUrl: string;
  /** A personal access token, a workspace token or a session JWT. */
  token?: string;
  /** Per attempt (default 30 s): an attempt that takes longer is abandoned and retried. */
  timeoutMs?: number;
  /** Retries after the first attempt (default 3). 0 turns retrying off. */
  maxRetries?: number;
  /** Backoff tuning; the defaults suit interactive and batch use alike. */
  retry?: Partial<Omit<RetryPolicy, 'maxRetries'>>;
  /** Another fetch (tests, proxies); default the global one. */
  fetch?: (request: Request) => Promise<Response>;
}

export type InvoicingClient = Client<paths>;

/**
 * A typed client: `client.GET('/accounts/{account_id}/invoices/{id}', { params: { path: { account_id, id } } })`.
 * A non-success answer rejects with InvoicingApiError (status, code, field, requestId); no answer after
 * every retry with InvoicingConnectionError. So `data` of a resolved call is always the success body.
 */
export function createInvoicingClient(options: InvoicingClientOptions): InvoicingClient {
  const retry: RetryPolicy = { ...DEFAULT_RETRY, ...options.retry, maxRetries: options.maxRetries ?? DEFAULT_RETRY.maxRetries };
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: retryingFetch({
      token: options.token,
      timeoutMs: options.timeoutMs ?? 30_000,
      retry,
      fetch: options.fetch ?? ((request) => globalThis.fetch(request)),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    }),
  });
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * Every item of a list, page after page: pass a function fetching the page at a cursor.
 * `for await (const invoice of paginate((cursor) => client.GET('/accounts/{account_id}/invoices', { params: { path: { account_id }, query: { cursor } } })))`
 */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<{ data?: Page<T> }>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const { data: page } = await fetchPage(cursor);
    if (!page) return;
    yield* page.data;
    cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
  } while (cursor);
}
