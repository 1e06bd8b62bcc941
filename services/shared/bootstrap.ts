// The one bootstrap of a service process (distributed mode): fail-fast config, adapters, gRPC server
// with health, and graceful shutdown on SIGTERM/SIGINT.
import { bindAdapters } from './adapters';
import { ConfigError, readEngineUrls, readEnv } from './config';
import { startGrpcServer } from './grpc/server';
import { createLogger } from './logger';
import { ServiceModule } from './module';
import { loadSecrets } from './secrets';

export async function runService(module: ServiceModule): Promise<void> {
  const log = createLogger(module.name);
  try {
    const { int, optional } = readEnv();
    const engines = readEngineUrls();
    if (!engines.mongoUrl || !engines.kafkaBrokers) throw new ConfigError('MONGO_URL and KAFKA_BROKERS are required for a service process');
    const secrets = loadSecrets(undefined);
    const adapters = await bindAdapters({ engines, clientId: module.name, urlSecret: secrets.urlSecret });
    const service = await module.create({
      adapters,
      secrets,
      log,
      peers: { identity: optional('IDENTITY_ADDR'), contacts: optional('CONTACTS_ADDR'), documents: optional('DOCUMENTS_ADDR'), rendering: optional('RENDERING_ADDR'), expenses: optional('EXPENSES_ADDR') },
    });
    const server = await startGrpcServer({
      bindings: service.bindings,
      host: optional('GRPC_HOST') ?? '127.0.0.1',
      port: int('GRPC_PORT', 0),
      log,
    });
    // One machine-readable line for launchers that wait for readiness.
    process.stdout.write(JSON.stringify({ ready: module.name, port: server.port }) + '\n');
    const drainMs = int('SHUTDOWN_DRAIN_MS', 0);
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      await server.shutdown(drainMs);
      await service.stop?.();
      await adapters.close();
      process.exit(0);
    };
    process.on('SIGTERM', () => void stop('SIGTERM'));
    process.on('SIGINT', () => void stop('SIGINT'));
  } catch (err) {
    log.fatal({ err: err instanceof Error ? err.message : String(err) }, 'failed to start');
    process.exit(1);
  }
}
