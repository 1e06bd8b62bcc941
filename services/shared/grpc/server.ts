// One gRPC server bootstrap for every service: binds the services, the standard health protocol
// (loaded with proto-loader from the vendored grpc/health/v1/health.proto), and graceful shutdown:
// NOT_SERVING → drain → tryShutdown (forced after a timeout).
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import path from 'node:path';
import { Logger } from '../logger';
import { repoRoot } from '../paths';
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
  shutdown(drainMs?: number): Promise<void>;
}

export async function startGrpcServer(options: {
  bindings: ServiceBinding[];
  host?: string;
  port?: number;
  log: Logger;
}): Promise<RunningServer> {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 32 * 1024 * 1024, 'grpc.enable_channelz': 0 });
  const statuses = new Map<string, string>([['', SERVING]]);
  const watchers = new Set<{ service: string; call: grpc.ServerWritableStream<{ service: string }, unknown> }>();
  for (const binding of options.bindings) {
    server.addService(binding.definition, binding.implementation);
    statuses.set(binding.name, SERVING);
  }
  server.addService(healthDefinition(), {
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
  });

  const host = options.host ?? '127.0.0.1';
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${options.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  options.log.info({ port, services: options.bindings.map((b) => b.name) }, 'grpc server listening');

  return {
    port,
    address: `${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
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
