// Metrics of a background work queue (the expenses service's OCR/extraction jobs, the renderer pool):
// how much waits, how much runs, how long a job takes and how it ended. One call per queue name; the
// series are shared, the queue is a label, so one dashboard and one alert rule cover every queue.
import { counter, gauge, histogram, PREFIX, secondsSince, SLOW_BUCKETS } from './metrics';

export interface WorkQueueMetrics {
  /** Jobs accepted and waiting for a worker. */
  setWaiting(count: number): void;
  /** Jobs being worked on now. */
  setRunning(count: number): void;
  /** Starts timing one job; call the result with its outcome (`completed`, `failed`, `timed_out`, …). */
  startJob(): (outcome: string) => void;
}

/** Queues whose depth is read at scrape time rather than set as it changes. */
const samplers = new Map<string, () => { waiting: number; running: number }>();

const waiting = () =>
  gauge(`${PREFIX}work_queue_waiting`, 'Jobs waiting for a worker, by queue.', ['queue'], function () {
    for (const [queue, sample] of samplers) this.labels({ queue }).set(sample().waiting);
  });
const running = () =>
  gauge(`${PREFIX}work_queue_running`, 'Jobs being worked on, by queue.', ['queue'], function () {
    for (const [queue, sample] of samplers) this.labels({ queue }).set(sample().running);
  });
const duration = () =>
  histogram(`${PREFIX}work_queue_job_duration_seconds`, 'Time a job took from start to end, by queue and outcome.', ['queue', 'outcome'], SLOW_BUCKETS);

/**
 * The metrics of queue `queue` (snake_case, e.g. `expenses_extraction`): work_queue_waiting,
 * work_queue_running and work_queue_job_duration_seconds (its _count by outcome is the job count).
 * With `sample`, waiting and running are read from it at every scrape (the queue's own counts, never
 * out of step); without it, the queue sets them.
 */
export function workQueueMetrics(queue: string, sample?: () => { waiting: number; running: number }): WorkQueueMetrics {
  if (sample) samplers.set(queue, sample);
  const w = waiting().labels({ queue });
  const r = running().labels({ queue });
  const d = duration();
  // Series exist from the start, so "0 waiting" is a value rather than a missing series.
  w.set(0);
  r.set(0);
  return {
    setWaiting: (count) => w.set(count),
    setRunning: (count) => r.set(count),
    startJob: () => {
      const started = process.hrtime.bigint();
      return (outcome) => d.labels({ queue, outcome }).observe(secondsSince(started));
    },
  };
}

/** A counter of events of a queue that are not jobs (retries, restarts of its workers), by queue and kind. */
export const workQueueEvents = () => counter(`${PREFIX}work_queue_events_total`, 'Notable events of a work queue (worker restarts, rejections), by queue and kind.', ['queue', 'kind']);
