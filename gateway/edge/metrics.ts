// Outcomes of the edge policies, counted: idempotency keys (created, replayed, mismatch, in_progress, and
// not_kept / unavailable) and rate-limit charges (allowed, limited, failed_open) by bucket.
import { counter, labelSets, PREFIX } from '../../services/shared/observability/metrics';

export type IdempotencyOutcome =
  /** First execution under the key; its answer is kept and replayed from now on. */
  | 'created'
  /** First execution whose answer is not kept (5xx, retryable 409): a retry executes again. */
  | 'not_kept'
  | 'replayed'
  /** Same key, different request: 409 idempotency_key_conflict. */
  | 'mismatch'
  | 'in_progress'
  /** The edge state could not be reached: 503 idempotency_unavailable. */
  | 'unavailable';

export type RateLimitOutcome = 'allowed' | 'limited' | 'failed_open';

const idempotency = () =>
  counter(`${PREFIX}idempotency_requests_total`, 'POSTs carrying an Idempotency-Key that reached their handler, by outcome.', ['outcome']);
let rateLimitKept: ReturnType<typeof rateLimitSeries> | undefined;
const rateLimitLabels = labelSets(['bucket', 'outcome'] as const);
const rateLimitSeries = () =>
  counter(`${PREFIX}rate_limit_decisions_total`, 'Rate-limit charges by bucket (api, pdf, ip) and outcome (allowed, limited, failed_open: edge state unreachable).', ['bucket', 'outcome']);

export const countIdempotency = (outcome: IdempotencyOutcome): void => idempotency().labels(outcome).inc();

/** `key` is the bucket's counter key (`api:<credential>`): only its kind becomes a label. Every API
 * request is charged: the series is looked up once and the label sets are kept. */
export const countRateLimit = (key: string, outcome: RateLimitOutcome): void =>
  (rateLimitKept ??= rateLimitSeries()).inc(rateLimitLabels(key.slice(0, key.indexOf(':')), outcome));
