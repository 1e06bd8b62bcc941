// The fetch under the generated client: adds the credential, gives every POST an Idempotency-Key that
// all of its attempts share, times out each attempt, retries what client/retry.ts calls retryable and
// turns every final non-success answer into an InvoicingApiError.
import { InvoicingApiError, InvoicingConnectionError } from './errors';
import { backoffMs, isRetryable, retryAfterMs, RetryPolicy } from './retry';

export interface TransportOptions {
  token?: string;
  timeoutMs: number;
  retry: RetryPolicy;
  fetch: (request: Request) => Promise<Response>;
  sleep: (ms: number) => Promise<void>;
}

export function retryingFetch(options: TransportOptions): (request: Request) => Promise<Response> {
  const { retry } = options;
  return async (request) => {
    const headers = new Headers(request.headers);
    if (options.token && !headers.has('authorization')) headers.set('authorization', `Bearer ${options.token}`);
    // One key per call, kept across its retries: the API answers a retry with the first attempt's result.
    const idempotencyKey = request.method === 'POST' ? (headers.get('idempotency-key') ?? globalThis.crypto.randomUUID()) : null;
    if (idempotencyKey) headers.set('idempotency-key', idempotencyKey);
    // Read once: every attempt sends the same bytes (the key is bound to them).
    const body = request.body ? await request.arrayBuffer() : undefined;
    for (let attempt = 0; ; attempt++) {
      const signal = AbortSignal.any([request.signal, AbortSignal.timeout(options.timeoutMs)]);
      let response: Response;
      try {
        response = await options.fetch(new Request(request.url, { method: request.method, headers, body, signal }));
      } catch (err) {
        if (request.signal.aborted) throw err; // the caller gave up: not ours to retry
        if (attempt >= retry.maxRetries) {
          const reason = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
          throw new InvoicingConnectionError(`${request.method} ${request.url}: no answer after ${attempt + 1} attempts (${reason})`, idempotencyKey, { cause: err });
        }
        await options.sleep(backoffMs(attempt, retry));
        continue;
      }
      if (response.ok || response.status === 304) return response;
      if (attempt < retry.maxRetries && (await isRetryable(response))) {
        const after = retryAfterMs(response);
        if (after === null || after <= retry.maxRetryAfterMs) {
          await response.body?.cancel();
          await options.sleep(after ?? backoffMs(attempt, retry));
          continue;
        }
      }
      throw await InvoicingApiError.from(response);
    }
  };
}
