// One system per mode for the whole jest run, shared by every test file that needs no system of its own
// (docs/operations.md "The test command"). Starting a distributed system costs 20–30 s of a 2-core
// machine; a file that calls startSystem() without options gets a handle on the run's shared system.
//
// The systems live in jest's parent process: globalSetup serves this coordinator on a loopback port and
// publishes its URL in SHARED_SYSTEMS_URL (the workers inherit it); a worker's startSystem() asks it for a
// mode's system, which is started on the first request (a run that selects no such file starts none) and
// described once ready; globalTeardown stops them. Files that restart, kill or configure their system
// (any option but `mode`, or `private: true`) keep starting their own.
import http from 'node:http';
import net from 'node:net';
import { clusterDefaults, SharedKey, SharedSystemInfo, startSystem, System } from './system';

export interface SharedSystems {
  /** What SHARED_SYSTEMS_URL holds: GET <url>/systems/<key> answers a SharedSystemInfo once it runs. */
  url: string;
  stop(): Promise<void>;
}

// `private`: these are the systems themselves (this process has SHARED_SYSTEMS_URL too).
const startOptions = (key: SharedKey) => ({ ...(key === 'cluster' ? clusterDefaults({}) : { mode: key }), private: true });

function describe(system: System): SharedSystemInfo {
  const grpc = system.grpcAddresses();
  return {
    mode: system.mode,
    dataDir: system.dataDir,
    baseUrl: system.baseUrl,
    baseUrls: system.baseUrls,
    cliEnv: system.cliEnv,
    grpc,
    replicaPorts: Object.fromEntries(Object.keys(grpc.services).map((name) => [name, system.replicaPorts(name)])),
  };
}

export async function serveSharedSystems(): Promise<SharedSystems> {
  const systems = new Map<SharedKey, Promise<System>>();
  const systemOf = (key: SharedKey): Promise<System> => {
    let started = systems.get(key);
    if (!started) {
      started = startSystem(startOptions(key));
      systems.set(key, started);
      // A start that failed (a loaded machine, a process that did not become ready) is tried again by the
      // next file that asks, rather than failing every file of the run with one error.
      started.catch(() => systems.delete(key));
    }
    return started;
  };
  const server = http.createServer((req, res) => {
    const answer = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const key = /^\/systems\/(embedded|distributed|cluster)$/.exec(req.url ?? '')?.[1] as SharedKey | undefined;
    if (!key) return answer(404, { error: `unknown shared system ${req.url}` });
    systemOf(key).then(
      (system) => answer(200, describe(system)),
      (err: Error) => answer(500, { error: `the shared ${key} system did not start: ${err.message}` }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // The parent's event loop must not be held open by the coordinator once jest is done.
  server.unref();
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    stop: async () => {
      server.close();
      await Promise.all([...systems.values()].map((started) => started.then((system) => system.stop(), () => undefined)));
    },
  };
}
