// One gRPC server bootstrap for every service: binds the services, the standard health protocol
// (loaded with proto-loader from the vendored grpc/health/v1/health.proto), and graceful shutdown:
// NOT_SERVING → drain → tryShutdown (forced after a timeout). Under mTLS (grpc/mesh.ts) every binding
// admits only its callers; the health service answers any authenticated peer, and optionally also on
// a plaintext health-only port for the kubelet's gRPC probes, which cannot present a certificate.
// Without mTLS a server listens only where nobody else can connect: loopback, or a Unix socket that only
// this user may open (the embedded mode, local-socket.ts); beyond loopback it refuses to start unless
// GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK says so (mesh.ts, assertPlaintextAllowed).
import * as grpc from '@grpc/grpc-js';
import { chmodSync } from 'node:fs';
import * as protoLoader from '@grpc/proto-loader';
import path from 'node:path';
import { ConfigError } from '../config';
import { Logger } from '../logger';
import { repoRoot } from '../paths';
import { assertPlaintextAllowed, authorised, MeshTls, meshTlsFromEnv, serverChannelOptions, serverCredentials } from './mesh';
import { ServiceBinding } from './typed';

const SERVING = 'SERVING';
const NOT_SERVING = 'NOT_SERVING';

let healthService: grpc.ServiceDefinition | undefined;

function healthDefinition(): grpc.ServiceDefinition {
  if (healthService) return healthService;
  const packageDefinition = protoLoader.loadSync(path.join(repoRoot, 'proto/grpc/health/v1/health.proto'), {
    keepCase: true,
    enums: String,
    defaults: true,
  });
  const loaded = grpc.loadPackageDefinition(packageDefinition) as unknown as {
    grpc: { health: { v1: { Health: { service: grpc.ServiceDefinition } } } };
  };
  healthService = loaded.grpc.health.v1.Health.service;
  return healthService;
}

export interface RunningServer {
  port: number;
  address: string;
  /** The plaintext health-only port, when one was asked for. */
  healthPort?: number;
  shutdown(drainMs?: number): Promise<void>;
}

const serverOptions: grpc.ServerOptions = { ...serverChannelOptions, 'grpc.max_receive_message_length': 32 * 1024 * 1024, 'grpc.enable_channelz': 0 };

const bind = (server: grpc.Server, address: string, credentials: grpc.ServerCredentials) =>
  new Promise<number>((resolve, reject) => server.bindAsync(address, credentials, (err, bound) => (err ? reject(err) : resolve(bound))));

export async function startGrpcServer(options: {
  bindings: ServiceBinding[];
  host?: string;
  /** The setting `host` came from, named when it is refused (default GRPC_HOST). */
  hostSetting?: string;
  port?: number;
  /** Listen on this Unix socket instead of host:port; it is made readable and writable by this user only. */
  socket?: string;
  log: Logger;
  /** Mesh certificates; default GRPC_TLS_DIR's (null: plaintext). */
  tls?: MeshTls | null;
  /** Also serve the health service alone, in plaintext, on this port (0: any free port). */
  healthPort?: number;
}): Promise<RunningServer> {
  const tls = options.tls === undefined ? meshTlsFromEnv() : options.tls;
  const host = options.host ?? '127.0.0.1';
  if (!tls && !options.socket) assertPlaintextAllowed(host, options.hostSetting ?? 'GRPC_HOST');
  const server = new grpc.Server(serverOptions);
  const statuses = new Map<string, string>([['', SERVING]]);
  const watchers = new Set<{ service: string; call: grpc.ServerWritableStream<{ service: string }, unknown> }>();
  for (const binding of options.bindings) {
    if (tls && !binding.callers?.length) throw new ConfigError(`${binding.name} names no callers: under mTLS nobody could call it`);
    server.addService(binding.definition, tls ? authorised(binding.name, binding.definition, binding.implementation, binding.callers!) : binding.implementation);
    statuses.set(binding.name, SERVING);
  }
  const health: grpc.UntypedServiceImplementation = {
    check: (call: grpc.ServerUnaryCall<{ service: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const status = statuses.get(call.request.service);
      if (!status) return callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' }, null);
      callback(null, { status });
    },
    watch: (call: grpc.ServerWritableStream<{ service: string }, unknown>) => {
      const entry = { service: call.request.service, call };
      watchers.add(entry);
      call.write({ status: statuses.get(entry.service) ?? 'SERVICE_UNKNOWN' });
      call.on('cancelled', () => watchers.delete(entry));
    },
  };
  server.addService(healthDefinition(), health);

  let port: number;
  let address: string;
  if (options.socket) {
    address = `unix:${options.socket}`;
    port = await bind(server, address, serverCredentials(tls));
    // Connecting to a Unix socket needs write permission on it: 0600 leaves it to this user (and root).
    chmodSync(options.socket, 0o600);
  } else {
    port = await bind(server, `${host}:${options.port ?? 0}`, serverCredentials(tls));
    address = `${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  }
  let healthServer: grpc.Server | undefined;
  let healthPort: number | undefined;
  if (options.healthPort !== undefined) {
    healthServer = new grpc.Server(serverOptions);
    healthServer.addService(healthDefinition(), health);
    healthPort = await bind(healthServer, `${host}:${options.healthPort}`, grpc.ServerCredentials.createInsecure());
  }
  options.log.info({ address, health_port: healthPort, mtls: tls !== null, services: options.bindings.map((b) => b.name) }, 'grpc server listening');

  return {
    port,
    healthPort,
    address,
    shutdown: async (drainMs = 0) => {
      for (const name of statuses.keys()) statuses.set(name, NOT_SERVING);
      for (const w of watchers) w.call.write({ status: NOT_SERVING });
      // Give load balancers time to see NOT_SERVING before refusing new calls.
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      for (const w of watchers) w.call.end();
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 10_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      healthServer?.forceShutdown();
    },
  };
}

export interface ServiceServers {
  service: RunningServer;
  /** The admin port's server, when the module has admin bindings. */
  admin?: RunningServer;
  shutdown(drainMs?: number): Promise<void>;
}

/**
 * A module's servers: its bindings on the service port, its admin bindings (`admin: true`) on the
 * admin port only — the service port answers UNIMPLEMENTED for them.
 */
export async function startServiceServers(options: {
  bindings: ServiceBinding[];
  host?: string;
  port?: number;
  adminHost?: string;
  adminPort?: number;
  healthPort?: number;
  /** Unix sockets instead of TCP (the embedded mode): the service's and the admin services'. */
  sockets?: { service: string; admin: string };
  log: Logger;
  tls?: MeshTls | null;
}): Promise<ServiceServers> {
  const adminBindings = options.bindings.filter((b) => b.admin);
  const service = await startGrpcServer({ ...options, socket: options.sockets?.service, bindings: options.bindings.filter((b) => !b.admin) });
  const admin = adminBindings.length
    ? await startGrpcServer({
        bindings: adminBindings,
        host: options.adminHost ?? options.host,
        hostSetting: options.adminHost === undefined ? 'GRPC_HOST' : 'ADMIN_GRPC_HOST',
        port: options.adminPort ?? 0,
        socket: options.sockets?.admin,
        log: options.log,
        tls: options.tls,
      })
    : undefined;
  return {
    service,
    admin,
    shutdown: async (drainMs) => {
      await Promise.all([service.shutdown(drainMs), admin?.shutdown(drainMs)]);
    },
  };
}

/** Asks a server's health service; used by the gateway's /readyz and by start-up waits. */
export function checkHealth(address: string, service = '', timeoutMs = 2000): Promise<string> {
  const Health = grpc.makeGenericClientConstructor(healthDefinition(), 'grpc.health.v1.Health');
  const client = new Health(address, grpc.credentials.createInsecure()) as unknown as {
    check: Function;
    close(): void;
  };
  return new Promise((resolve) => {
    client.check({ service }, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err: Error | null, res: { status: string }) => {
      client.close();
      resolve(err ? 'UNREACHABLE' : res.status);
    });
  });
}
