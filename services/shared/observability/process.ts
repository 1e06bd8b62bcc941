// Observability of a process, started by each bootstrap (runService, runGateway, the embedded launcher)
// before anything else: tracing when the OTEL_* environment asks for it, and the /metrics listener.
import { Logger } from '../logger';
import { startMetricsServer } from './metrics-server';
import { startTracing } from './tracing';

export interface ProcessObservability {
  /** The bound metrics port (undefined: off). */
  metricsPort?: number;
  /** Flushes spans and closes the metrics listener. */
  stop(): Promise<void>;
}

export async function startObservability(name: string, log: Logger): Promise<ProcessObservability> {
  const tracing = await startTracing(name, log);
  const metrics = await startMetricsServer(log);
  return {
    metricsPort: metrics.port,
    stop: async () => {
      await tracing.shutdown();
      await metrics.close();
    },
  };
}
