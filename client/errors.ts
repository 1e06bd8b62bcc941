// The client's errors: an answer of the API that is not a success (InvoicingApiError, with the fields
// of the API's error body), or no answer at all after every retry (InvoicingConnectionError).

/** The API answered with an error (after any retries): its status and the error body's fields. */
export class InvoicingApiError extends Error {
  readonly name = 'InvoicingApiError';

  constructor(
    readonly status: number,
    /** Machine-readable snake_case code (`invalid_currency`, `rate_limited`, …). */
    readonly code: string,
    message: string,
    /** The request id (`X-Request-Id`): quote it when reporting a problem. */
    readonly requestId: string | null,
    /** The offending request field, when there is one. */
    readonly field: string | null,
    /** The whole error body (402 answers carry `upgrade_url`, 403 `required_scope`). */
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }

  static async from(response: Response): Promise<InvoicingApiError> {
    const text = await response.text();
    let error: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(text) as { error?: Record<string, unknown> };
      if (parsed && typeof parsed.error === 'object' && parsed.error) error = parsed.error;
    } catch {
      // Not the API's JSON error body (a proxy in between answered): keep status and text.
    }
    const str = (value: unknown) => (typeof value === 'string' ? value : null);
    return new InvoicingApiError(
      response.status,
      str(error.code) ?? `http_${response.status}`,
      str(error.message) ?? (text.slice(0, 200) || response.statusText),
      str(error.request_id) ?? response.headers.get('x-request-id'),
      str(error.field),
      error,
    );
  }
}

/** No answer: the connection failed or every attempt timed out. Retrying a POST with the same
 * Idempotency-Key (the client keeps it in `idempotencyKey`) is safe: it takes effect at most once. */
export class InvoicingConnectionError extends Error {
  readonly name = 'InvoicingConnectionError';

  constructor(
    message: string,
    readonly idempotencyKey: string | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
