// Which failed calls a client retries by itself: only those that cannot apply twice — reads (get*,
// list*, authenticate) and calls carrying an Idempotency-Key, which the service records with its
// write (services/shared/idempotency.ts) — and only on a transport failure (UNAVAILABLE without a
// service's error detail: the replica died or went away mid-call). The next attempt goes to another
// replica: the channel's round_robin skips subchannels that are not ready.
import * as grpc from '@grpc/grpc-js';
import { ERROR_TRAILER } from './errors';

const READ_METHOD = /^(get|list)[A-Z]|^authenticate$/;
/** Attempts in all, first included. */
const MAX_ATTEMPTS = 3;
const BACKOFF_MS = [50, 200];

export function isRetryable(method: string, keyed: boolean): boolean {
  return keyed || READ_METHOD.test(method);
}

/** A transport failure (no error detail from a service handler), as opposed to a service answering UNAVAILABLE. */
function transportFailure(err: grpc.ServiceError): boolean {
  return err.code === grpc.status.UNAVAILABLE && (err.metadata?.get(ERROR_TRAILER).length ?? 0) === 0;
}

/**
 * Runs `attempt` until it succeeds, fails otherwise than by transport, or the attempts or the deadline
 * run out; rejects with the last attempt's grpc-js error.
 */
export async function withRetries<T>(retryable: boolean, deadline: number, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (caught) {
      const err = caught as grpc.ServiceError;
      const pause = BACKOFF_MS[n - 1] ?? 0;
      if (!retryable || n >= MAX_ATTEMPTS || !transportFailure(err) || Date.now() + pause >= deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
