// Embedded mode (the default of `npm start`): every service and the gateway in one process. The gateway and
// the services call each other through the in-process transport (grpc/in-process.ts: the same clients,
// codecs, metadata, deadlines and caller checks, no HTTP/2); EMBEDDED_TRANSPORT=socket makes them use the
// sockets below instead. Every module is also served over real gRPC on Unix sockets only this user can open
// (DATA_DIR/grpc, 0700/0600) for the CLI, found in DATA_DIR/runtime.json: no gRPC port on TCP, so no other
// local account reaches the services or the admin services. Data in DATA_DIR (SQLite) unless engine URLs
// are configured.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bindAdapters } from '../../services/shared/adapters';
import { FsBlobStore } from '../../services/shared/blobs/fs';
import { ConfigError, readEngineUrls, readEnv } from '../../services/shared/config';
import { ServiceServers, startServiceServers } from '../../services/shared/grpc/server';
import { inProcessAddress, serveInProcess } from '../../services/shared/grpc/in-process';
import { privateSocketDirectory } from '../../services/shared/grpc/local-socket';
import { usePlaintextMesh } from '../../services/shared/grpc/mesh';
import { createLogger } from '../../services/shared/logger';
import { startObservability } from '../../services/shared/observability/process';
import { loadSecrets } from '../../services/shared/secrets';
import { connectAdmin, connectClients } from '../../gateway/clients';
import { bindEdgeState } from '../../gateway/edge/bind';
import { readEdgeConfig } from '../../gateway/edge/config';
import { readDrainOptions } from '../../gateway/http/lifecycle';
import { readUploadOptions } from '../../gateway/http/spool';
import { createGateway } from '../../gateway/server';
import { RESTORE_MARKER } from '../cli/backup/data-dir';
import { serviceModules } from '../modules';

async function main(): Promise<void> {
  const log = createLogger('embedded');
  // One process talking to itself over private Unix sockets: no mTLS (docs/architecture.md "Internal network").
  usePlaintextMesh();
  const { int, str, optional } = readEnv();
  const dataDir = path.resolve(str('DATA_DIR', '.data'));
  const port = int('PORT', 8080);
  // `invoicing restore` is writing this directory, or was interrupted: its data is not whole.
  if (existsSync(path.join(dataDir, RESTORE_MARKER))) {
    throw new ConfigError(`a restore into ${dataDir} is in progress or was interrupted (${RESTORE_MARKER}): let it finish, or run invoicing restore again with --force`);
  }
  const engines = readEngineUrls();
  const secrets = loadSecrets(dataDir);
  // One registry and one /metrics (METRICS_PORT) for every service and the gateway of this process.
  const observability = await startObservability('embedded', log);
  const adapters = await bindAdapters({ dataDir, engines, clientId: 'embedded', urlSecret: secrets.urlSecret, log });
  // Rate limits and idempotency records: DATA_DIR/edge.db, or Redis when REDIS_URL is set.
  const edgeConfig = readEdgeConfig();
  const edgeState = await bindEdgeState({ redisUrl: engines.redisUrl, dataDir, config: edgeConfig });

  const transport = str('EMBEDDED_TRANSPORT', 'in-process');
  if (transport !== 'in-process' && transport !== 'socket') throw new ConfigError(`EMBEDDED_TRANSPORT must be in-process or socket, not ${transport}`);
  const sockets = privateSocketDirectory(dataDir);
  /** The modules' socket addresses (runtime.json, the CLI), and the ones callers in this process use. */
  const addresses: Record<string, string> = {};
  const started: string[] = [];
  const peerAddress = (target: string, caller: string) => (transport === 'in-process' ? inProcessAddress(target, caller) : addresses[target]);
  const peersOf = (caller: string) => Object.fromEntries(started.map((target) => [target, peerAddress(target, caller)]));
  // Admin services listen on a socket of their own, found by the CLI in runtime.json.
  const adminAddresses: Record<string, string> = {};
  const servers: ServiceServers[] = [];
  const stops: Array<() => Promise<void>> = [];
  for (const module of serviceModules) {
    const service = await module.create({ adapters, secrets, log: log.child({ service: module.name }), peers: peersOf(module.name) });
    if (transport === 'in-process') {
      const unserve = serveInProcess(module.name, service.bindings);
      stops.push(async () => unserve());
    }
    const server = await startServiceServers({
      bindings: service.bindings,
      sockets: { service: sockets.socket(module.name), admin: sockets.socket(`${module.name}-admin`) },
      log: log.child({ service: module.name }),
    });
    addresses[module.name] = server.service.address;
    started.push(module.name);
    if (server.admin) adminAddresses[module.name] = server.admin.address;
    servers.push(server);
    if (service.stop) stops.push(service.stop);
  }
  const gatewayPeer = (target: string) => peerAddress(target, 'gateway');
  const clients = connectClients({
    identity: gatewayPeer('identity'),
    contacts: gatewayPeer('contacts'),
    documents: gatewayPeer('documents'),
    rendering: gatewayPeer('rendering'),
    expenses: gatewayPeer('expenses'),
  });
  const gateway = await createGateway({
    clients,
    bus: adapters.bus,
    log: log.child({ service: 'gateway' }),
    cacheTtlMs: int('AUTH_CACHE_TTL_MS', 60_000),
    upgradeUrl: optional('UPGRADE_URL'),
    edge: { state: edgeState, config: edgeConfig },
    signedBlobs: adapters.blobs instanceof FsBlobStore ? adapters.blobs : undefined,
    uploads: readUploadOptions(process.env, dataDir),
  });
  const http = await gateway.listen(port, optional('HOST') ?? '127.0.0.1');
  const address = http.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  if (adapters.blobs instanceof FsBlobStore) adapters.blobs.setBaseUrl(optional('PUBLIC_URL') ?? `http://127.0.0.1:${boundPort}`);
  // The admin CLI finds the running system through this file.
  // `engines`: where the data is, for `invoicing backup` (which copies only what DATA_DIR holds).
  const kept = { store: engines.mongoUrl ? 'mongo' : 'sqlite', blobs: engines.minio ? 'minio' : 'fs', edge: engines.redisUrl ? 'redis' : 'sqlite' };
  writeFileSync(
    path.join(dataDir, 'runtime.json'),
    JSON.stringify({ pid: process.pid, port: boundPort, services: addresses, admin: adminAddresses, engines: kept }, null, 2),
    { mode: 0o600 },
  );

  const admin = connectAdmin(adminAddresses.identity);
  const demo = await admin.bootstrap({ email: 'demo@example.com', password: 'demo-password' });
  admin.close();
  if (demo.created) {
    process.stderr.write(
      `\nCreated demo user demo@example.com (password demo-password), workspace ${demo.account_id} and an all-scopes token.\n` +
        `Try:\n  curl -H 'Authorization: Bearer ${demo.token}' http://127.0.0.1:${boundPort}/api/v1/user/accounts\n\n`,
    );
  }
  process.stdout.write(JSON.stringify({ ready: 'embedded', port: boundPort, data_dir: dataDir, metrics_port: observability.metricsPort ?? null }) + '\n');

  const drain = readDrainOptions();
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await gateway.drain(drain);
    clients.close();
    await Promise.all(servers.map((s) => s.shutdown(0)));
    sockets.remove();
    for (const s of stops) await s();
    await adapters.close();
    await edgeState.close();
    await observability.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
