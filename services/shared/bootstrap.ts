// The one bootstrap of a service process (distributed mode): fail-fast config, adapters, gRPC server
// with health, and graceful shutdown on SIGTERM/SIGINT.
import { bindAdapters } from './adapters';
import { ConfigError, readEngineUrls, readEnv } from './config';
import { startServiceServers } from './grpc/server';
import { createLogger } from './logger';
import { ServiceModule } from './module';
import { startObservability } from './observability/process';
import { secretsFromEnv } from './secrets';

/** The admin port of a service process unless ADMIN_GRPC_PORT says otherwise (0: any free port). */
export const DEFAULT_ADMIN_GRPC_PORT = 50052;

export async function runService(module: ServiceModule): Promise<void> {
  const log = createLogger(module.name);
  try {
    const { int, optional } = readEnv();
    const engines = readEngineUrls();
    if (!engines.mongoUrl || !engines.kafkaBrokers) throw new ConfigError('MONGO_URL and KAFKA_BROKERS are required for a service process');
    // Only what the module declares (least privilege). Blobs on MinIO are signed by MinIO's own keys; only
    // the file-system store (no MINIO_ENDPOINT) signs its URLs with URL_SECRET.
    const { blobs } = module.needs;
    const fsBlobs = blobs && !engines.minio;
    const secrets = secretsFromEnv(fsBlobs ? [...module.needs.secrets, 'urlSecret'] : module.needs.secrets);
    const observability = await startObservability(module.name, log);
    const adapters = await bindAdapters({ engines, clientId: module.name, blobs, urlSecret: fsBlobs ? secrets.urlSecret : undefined, log });
    const service = await module.create({
      adapters,
      secrets,
      log,
      peers: { identity: optional('IDENTITY_ADDR'), contacts: optional('CONTACTS_ADDR'), documents: optional('DOCUMENTS_ADDR'), rendering: optional('RENDERING_ADDR'), expenses: optional('EXPENSES_ADDR') },
    });
    const host = optional('GRPC_HOST') ?? '127.0.0.1';
    const healthPort = optional('GRPC_HEALTH_PORT');
    const server = await startServiceServers({
      bindings: service.bindings,
      host,
      port: int('GRPC_PORT', 0),
      // Admin services (identity's, documents') never share the service port (docs/architecture.md);
      // their host defaults to GRPC_HOST.
      adminHost: optional('ADMIN_GRPC_HOST'),
      adminPort: int('ADMIN_GRPC_PORT', DEFAULT_ADMIN_GRPC_PORT),
      healthPort: healthPort === undefined ? undefined : int('GRPC_HEALTH_PORT', 0),
      log,
    });
    // One machine-readable line for launchers that wait for readiness.
    process.stdout.write(
      JSON.stringify({
        ready: module.name,
        port: server.service.port,
        admin_port: server.admin?.port,
        health_port: server.service.healthPort,
        metrics_port: observability.metricsPort ?? null,
      }) + '\n',
    );
    const drainMs = int('SHUTDOWN_DRAIN_MS', 0);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      await server.shutdown(drainMs);
      await service.stop?.();
      await adapters.close();
      await observability.stop();
      process.exit(0);
    };
    process.on('SIGTERM', () => void stop('SIGTERM'));
    process.on('SIGINT', () => void stop('SIGINT'));
  } catch (err) {
    log.fatal({ err: err instanceof Error ? err.message : String(err) }, 'failed to start');
    process.exit(1);
  }
}
