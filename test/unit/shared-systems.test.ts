// The test run's shared systems (docs/testing.md): a file that asks for no system of its own gets a handle
// on the run's system of its mode, which it cannot stop or disturb. The coordinator here is a fake that
// records what it is asked and answers a description, so no system is started.
import http from 'node:http';
import net from 'node:net';
import { SharedSystemInfo, sharedSystemFor, startSystem } from '../support/system';

const info: SharedSystemInfo = {
  mode: 'distributed',
  dataDir: '/tmp/shared-system-data',
  baseUrl: 'http://127.0.0.1:1',
  baseUrls: ['http://127.0.0.1:1'],
  cliEnv: { IDENTITY_ADMIN_ADDR: '127.0.0.1:2' },
  grpc: { services: { identity: '127.0.0.1:3' }, admin: { identity: '127.0.0.1:2' } },
  replicaPorts: { identity: [3] },
};

let server: http.Server;
const asked: string[] = [];
let answer: { status: number; body: unknown } = { status: 200, body: info };
const saved = { url: process.env.SHARED_SYSTEMS_URL, mode: process.env.API_MODE, cluster: process.env.API_CLUSTER, sharing: process.env.SHARED_SYSTEMS };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.env.SHARED_SYSTEMS_URL = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  for (const [name, value] of [['SHARED_SYSTEMS_URL', saved.url], ['API_MODE', saved.mode], ['API_CLUSTER', saved.cluster], ['SHARED_SYSTEMS', saved.sharing]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  asked.length = 0;
  answer = { status: 200, body: info };
  delete process.env.API_CLUSTER;
  process.env.API_MODE = 'distributed';
  process.env.SHARED_SYSTEMS = 'all';
});

describe('which files share a system (sharedSystemFor)', () => {
  it('by default only the embedded system is shared; SHARED_SYSTEMS=all shares the distributed and cluster ones too', () => {
    delete process.env.SHARED_SYSTEMS;
    expect(sharedSystemFor({ mode: 'embedded' })).toBe('embedded');
    expect(sharedSystemFor({})).toBeUndefined(); // API_MODE=distributed
    process.env.API_CLUSTER = '1';
    expect(sharedSystemFor({})).toBeUndefined();
    process.env.SHARED_SYSTEMS = 'all';
    expect(sharedSystemFor({})).toBe('cluster');
    delete process.env.API_CLUSTER;
    expect(sharedSystemFor({})).toBe('distributed');
  });

  it('a file that passes any option but the mode gets a system of its own', () => {
    expect(sharedSystemFor({ mode: 'embedded', private: true })).toBeUndefined();
    expect(sharedSystemFor({ mode: 'embedded', env: {} })).toBeUndefined();
    expect(sharedSystemFor({ mode: 'embedded', metrics: true })).toBeUndefined();
  });
});

describe('startSystem() without options: the run’s shared system of the mode', () => {
  it('asks the coordinator for the current mode (or the one given, or cluster in api-cluster) and hands out what it describes', async () => {
    const system = await startSystem();
    expect(asked).toEqual(['/systems/distributed']);
    expect(system).toMatchObject({ mode: 'distributed', dataDir: info.dataDir, baseUrl: info.baseUrl, baseUrls: info.baseUrls, cliEnv: info.cliEnv });
    expect(system.grpcAddresses()).toEqual(info.grpc);
    expect(system.replicaPorts('identity')).toEqual([3]);
    await startSystem({ mode: 'embedded' });
    process.env.API_CLUSTER = '1';
    await startSystem();
    expect(asked).toEqual(['/systems/distributed', '/systems/embedded', '/systems/cluster']);
  });

  it('stop() leaves it running; restart, kills, signals and its output fail, naming private: true', async () => {
    const system = await startSystem();
    await expect(system.stop()).resolves.toBeUndefined();
    await expect(async () => system.restart()).rejects.toThrow(/restart\(\): this file uses the run's shared distributed system; pass \{ private: true \}/);
    await expect(async () => system.killGateway()).rejects.toThrow(/private: true/);
    await expect(async () => system.killService('identity')).rejects.toThrow(/private: true/);
    await expect(async () => system.terminateGateway()).rejects.toThrow(/private: true/);
    expect(() => system.signalService('identity', 'SIGSTOP')).toThrow(/private: true/);
    expect(() => system.output()).toThrow(/private: true/);
  });

  it('a shared system that did not start fails the file with the coordinator’s reason', async () => {
    answer = { status: 500, body: { error: 'the shared distributed system did not start: gateway 0 exited with 1' } };
    await expect(startSystem()).rejects.toThrow('the shared distributed system did not start: gateway 0 exited with 1');
  });
});
