// Time limits and cancellation: every long step races the job's AbortSignal and ends with an
// ExtractionFailure('timeout') instead of running on after the job gave up.
import { ExtractionFailure } from '../ports/extractor';

export function checkAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw new ExtractionFailure('timeout', 'extraction was stopped at its time limit');
}

/** Resolves with `work`, or rejects with a timeout failure as soon as `signal` aborts (running `onAbort`). */
export function abortable<T>(work: Promise<T>, signal?: AbortSignal, onAbort?: () => void): Promise<T> {
  if (!signal) return work;
  checkAborted(signal);
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort?.();
      reject(new ExtractionFailure('timeout', 'extraction was stopped at its time limit'));
    };
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', abort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', abort);
        reject(e);
      },
    );
  });
}

/** A signal that aborts when `parent` does or after `ms`, whichever comes first. */
export function withTimeout(parent: AbortSignal | undefined, ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  timer.unref?.();
  const onParent = () => controller.abort();
  if (parent?.aborted) controller.abort();
  parent?.addEventListener('abort', onParent, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParent);
    },
  };
}
