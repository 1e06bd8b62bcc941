// Starts a gateway process from the environment (distributed mode) with graceful shutdown.
import { randomUUID } from 'node:crypto';
import { KafkaEventBus } from '../services/shared/bus/kafka';
import { EventBus } from '../services/shared/bus/port';
import { ConfigError, readEngineUrls, readEnv } from '../services/shared/config';
import { createLogger } from '../services/shared/logger';
import { connectClients } from './clients';
import { bindEdgeState } from './edge/bind';
import { EdgeConfig, readEdgeConfig } from './edge/config';
import { EdgeState } from './edge/ports/edge-state';
import { createGateway } from './server';

export interface GatewayEdge {
  bus: EventBus;
  /** Rate-limit counters and idempotency records, shared by every gateway replica (Redis). */
  edgeState: EdgeState;
  edgeConfig: EdgeConfig;
  close(): Promise<void>;
}

export async function bindGatewayEdge(): Promise<GatewayEdge> {
  const engines = readEngineUrls();
  if (!engines.kafkaBrokers?.length) throw new ConfigError('KAFKA_BROKERS is required for a gateway process');
  if (!engines.redisUrl) throw new ConfigError('REDIS_URL is required for a gateway process (replicas share rate limits and idempotency keys)');
  const edgeConfig = readEdgeConfig();
  const edgeState = await bindEdgeState({ redisUrl: engines.redisUrl, config: edgeConfig });
  const bus = new KafkaEventBus(engines.kafkaBrokers, 'gateway', 3, engines.kafkaTopicPrefix);
  return {
    bus,
    edgeState,
    edgeConfig,
    close: async () => {
      await bus.close();
      await edgeState.close();
    },
  };
}

export async function runGateway(bind: () => Promise<GatewayEdge>): Promise<void> {
  const log = createLogger('gateway');
  try {
    const { str, int, optional } = readEnv();
    const addresses = { identity: str('IDENTITY_ADDR'), contacts: str('CONTACTS_ADDR'), documents: str('DOCUMENTS_ADDR'), rendering: str('RENDERING_ADDR'), expenses: str('EXPENSES_ADDR') };
    const edge = await bind();
    const clients = connectClients(addresses);
    const gateway = await createGateway({
      clients,
      addresses,
      bus: edge.bus,
      log,
      cacheTtlMs: int('AUTH_CACHE_TTL_MS', 60_000),
      upgradeUrl: optional('UPGRADE_URL'),
      instanceId: optional('POD_NAME') ?? randomUUID(),
      edge: { state: edge.edgeState, config: edge.edgeConfig },
    });
    const server = await gateway.listen(int('PORT', 8080), optional('HOST') ?? '127.0.0.1');
    const address = server.address();
    process.stdout.write(JSON.stringify({ ready: 'gateway', port: typeof address === 'object' && address ? address.port : 0 }) + '\n');
    const stop = async () => {
      await gateway.close();
      clients.close();
      await edge.close();
      process.exit(0);
    };
    process.on('SIGTERM', () => void stop());
    process.on('SIGINT', () => void stop());
  } catch (err) {
    log.fatal({ err: err instanceof Error ? err.message : String(err) }, 'failed to start');
    process.exit(1);
  }
}
