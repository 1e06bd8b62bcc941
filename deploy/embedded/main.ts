// Embedded mode (the default of `npm start`): every service and the gateway in one process, still
// talking gRPC over loopback; data in DATA_DIR (SQLite) unless engine URLs are configured.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bindAdapters } from '../../services/shared/adapters';
import { FsBlobStore } from '../../services/shared/blobs/fs';
import { readEngineUrls, readEnv } from '../../services/shared/config';
import { startGrpcServer, RunningServer } from '../../services/shared/grpc/server';
import { createLogger } from '../../services/shared/logger';
import { loadSecrets } from '../../services/shared/secrets';
import { connectAdmin, connectClients } from '../../gateway/clients';
import { bindEdgeState } from '../../gateway/edge/bind';
import { readEdgeConfig } from '../../gateway/edge/config';
import { createGateway } from '../../gateway/server';
import { serviceModules } from '../modules';

async function main(): Promise<void> {
  const log = createLogger('embedded');
  const { int, str, optional } = readEnv();
  const dataDir = path.resolve(str('DATA_DIR', '.data'));
  const port = int('PORT', 8080);
  const engines = readEngineUrls();
  const secrets = loadSecrets(dataDir);
  const adapters = await bindAdapters({ dataDir, engines, clientId: 'embedded', urlSecret: secrets.urlSecret });
  // Rate limits and idempotency records: DATA_DIR/edge.db, or Redis when REDIS_URL is set.
  const edgeConfig = readEdgeConfig();
  const edgeState = await bindEdgeState({ redisUrl: engines.redisUrl, dataDir, config: edgeConfig });

  const addresses: Record<string, string> = {};
  const servers: RunningServer[] = [];
  const stops: Array<() => Promise<void>> = [];
  for (const module of serviceModules) {
    const service = await module.create({ adapters, secrets, log: log.child({ service: module.name }), peers: { ...addresses } });
    const server = await startGrpcServer({ bindings: service.bindings, log: log.child({ service: module.name }) });
    addresses[module.name] = server.address;
    servers.push(server);
    if (service.stop) stops.push(service.stop);
  }
  const serviceAddresses = { identity: addresses.identity, contacts: addresses.contacts, documents: addresses.documents, rendering: addresses.rendering, expenses: addresses.expenses };
  const clients = connectClients(serviceAddresses);
  const gateway = await createGateway({
    clients,
    addresses: serviceAddresses,
    bus: adapters.bus,
    log: log.child({ service: 'gateway' }),
    cacheTtlMs: int('AUTH_CACHE_TTL_MS', 60_000),
    upgradeUrl: optional('UPGRADE_URL'),
    edge: { state: edgeState, config: edgeConfig },
    signedBlobs: adapters.blobs instanceof FsBlobStore ? adapters.blobs : undefined,
  });
  const http = await gateway.listen(port, optional('HOST') ?? '127.0.0.1');
  const address = http.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  if (adapters.blobs instanceof FsBlobStore) adapters.blobs.setBaseUrl(optional('PUBLIC_URL') ?? `http://127.0.0.1:${boundPort}`);
  // The admin CLI finds the running system through this file.
  writeFileSync(path.join(dataDir, 'runtime.json'), JSON.stringify({ pid: process.pid, port: boundPort, services: addresses }, null, 2));

  const admin = connectAdmin(addresses.identity);
  const demo = await admin.bootstrap({ email: 'demo@example.com', password: 'demo-password' });
  admin.close();
  if (demo.created) {
    process.stderr.write(
      `\nCreated demo user demo@example.com (password demo-password), workspace ${demo.account_id} and an all-scopes token.\n` +
        `Try:\n  curl -H 'Authorization: Bearer ${demo.token}' http://127.0.0.1:${boundPort}/api/v1/user/accounts\n\n`,
    );
  }
  process.stdout.write(JSON.stringify({ ready: 'embedded', port: boundPort, data_dir: dataDir }) + '\n');

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await gateway.close();
    clients.close();
    await Promise.all(servers.map((s) => s.shutdown(0)));
    for (const s of stops) await s();
    await adapters.close();
    await edgeState.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
