// The one metrics registry of a process (prom-client's global one): every service module, the gateway and
// the shared adapters register their series here, so an embedded process, which runs them all, serves one
// /metrics and a distributed one serves its own (metrics-server.ts). Series are created on first use and
// shared afterwards: two modules in one process asking for the same name get the same series.
import client from 'prom-client';

export const registry = client.register;

/** Every series of the system starts with this, so a shared Prometheus can tell them apart. */
export const PREFIX = 'invoicing_';

/** Latency buckets (seconds) for API calls and RPCs: 1 ms … 10 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Buckets (seconds) for slow work: renders, OCR, bus delivery delays. */
export const SLOW_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

let defaultsStarted = false;

/** Process metrics (CPU, memory, event-loop lag, GC, handles), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  client.collectDefaultMetrics({ register: registry, prefix: PREFIX });
}

function existing<T>(name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}

export function counter<L extends string>(name: string, help: string, labelNames: readonly L[]): client.Counter<L> {
  return existing<client.Counter<L>>(name) ?? new client.Counter<L>({ name, help, labelNames, registers: [registry] });
}

export function histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets = LATENCY_BUCKETS): client.Histogram<L> {
  return existing<client.Histogram<L>>(name) ?? new client.Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });
}

/** A gauge; `collect` (called at scrape time) may set it from a source of truth instead of tracking changes. */
export function gauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  collect?: (this: client.Gauge<L>) => void | Promise<void>,
): client.Gauge<L> {
  return existing<client.Gauge<L>>(name) ?? new client.Gauge<L>({ name, help, labelNames, registers: [registry], ...(collect ? { collect } : {}) });
}

/**
 * Label sets by their values, built once and reused: `series.inc(labels)` with a kept object spares
 * prom-client's `labels(…)` (an argument check, an object and a bound function per call) on paths
 * that observe every request. Only for labels of bounded cardinality (route templates, RPC methods,
 * status codes), as every label must be.
 */
export function labelSets<L extends string>(names: readonly L[]): (...values: string[]) => Record<L, string> {
  // One map level per label: lookups hash the (usually constant) value strings, never a joined key.
  const root = new Map<string, unknown>();
  return (...values) => {
    let level = root;
    for (let i = 0; i < values.length - 1; i++) {
      let next = level.get(values[i]) as Map<string, unknown> | undefined;
      if (!next) level.set(values[i], (next = new Map()));
      level = next;
    }
    const last = values[values.length - 1];
    let labels = level.get(last) as Record<L, string> | undefined;
    if (!labels) {
      labels = Object.fromEntries(names.map((name, i) => [name, values[i]])) as Record<L, string>;
      level.set(last, labels);
    }
    return labels;
  };
}

/** Seconds since `startNs` (a process.hrtime.bigint()). */
export const secondsSince = (startNs: bigint): number => Number(process.hrtime.bigint() - startNs) / 1e9;
