// The internal network's plumbing in one process (docs/architecture.md "Internal network"): which
// failed calls a client retries, the plaintext health-only port beside an mTLS server, and a binding
// that names no callers refusing to start under mTLS, the refusal of a plaintext server beyond loopback,
// callers refused on every kind of RPC (streaming too), and the embedded mode's private Unix sockets.
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ExpensesServiceService } from '../../gen/invoicing/expenses/v1/expenses';
import { IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { ERROR_TRAILER } from '../../services/shared/grpc/errors';
import { privateSocketDirectory } from '../../services/shared/grpc/local-socket';
import { isLoopbackHost, loadMeshTls, PLAINTEXT_NETWORK_SETTING } from '../../services/shared/grpc/mesh';
import { isRetryable, withRetries } from '../../services/shared/grpc/retry';
import { checkHealth, startGrpcServer, startServiceServers } from '../../services/shared/grpc/server';
import { AsyncHandlers, connect, implement, restrict } from '../../services/shared/grpc/typed';
import { createLogger } from '../../services/shared/logger';
import { createTestCa } from '../support/certs';

const log = createLogger('test');

const failure = (code: grpc.status, withDetail = false): grpc.ServiceError => {
  const metadata = new grpc.Metadata();
  if (withDetail) metadata.set(ERROR_TRAILER, Buffer.from([]));
  return Object.assign(new Error('failed'), { code, details: 'failed', metadata });
};

/** Fails with `errors` in turn, then succeeds; counts attempts. */
function flaky(errors: grpc.ServiceError[]) {
  let attempts = 0;
  return {
    get attempts() {
      return attempts;
    },
    call: async () => {
      const err = errors[attempts++];
      if (err) throw err;
      return 'ok';
    },
  };
}

const inTenSeconds = () => Date.now() + 10_000;

describe('client retries', () => {
  it('retry reads and keyed calls, never other writes', () => {
    expect(isRetryable('getDocument', false)).toBe(true);
    expect(isRetryable('listContacts', false)).toBe(true);
    expect(isRetryable('authenticate', false)).toBe(true);
    expect(isRetryable('createContact', false)).toBe(false);
    expect(isRetryable('issueDocument', false)).toBe(false);
    expect(isRetryable('createContact', true)).toBe(true);
  });

  it('retry a transport failure (UNAVAILABLE without a service detail) up to 3 attempts', async () => {
    const twice = flaky([failure(grpc.status.UNAVAILABLE), failure(grpc.status.UNAVAILABLE)]);
    await expect(withRetries(true, inTenSeconds(), twice.call)).resolves.toBe('ok');
    expect(twice.attempts).toBe(3);
    const always = flaky([1, 2, 3, 4].map(() => failure(grpc.status.UNAVAILABLE)));
    await expect(withRetries(true, inTenSeconds(), always.call)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    expect(always.attempts).toBe(3);
  });

  it('do not retry a non-retryable call, a service that answered (detail trailer), other statuses, or past the deadline', async () => {
    for (const [retryable, err, deadline] of [
      [false, failure(grpc.status.UNAVAILABLE), inTenSeconds()],
      [true, failure(grpc.status.UNAVAILABLE, true), inTenSeconds()],
      [true, failure(grpc.status.DEADLINE_EXCEEDED), inTenSeconds()],
      [true, failure(grpc.status.INTERNAL), inTenSeconds()],
      [true, failure(grpc.status.UNAVAILABLE), Date.now()],
    ] as const) {
      const once = flaky([err]);
      await expect(withRetries(retryable, deadline, once.call)).rejects.toBe(err);
      expect(once.attempts).toBe(1);
    }
  });
});

describe('a server under mTLS', () => {
  const ca = createTestCa();
  const unused = async () => {
    throw new Error('not used by this test');
  };
  const handlers = Object.fromEntries(Object.keys(IdentityServiceService).map((k) => [k, unused])) as unknown as AsyncHandlers<
    typeof IdentityServiceService
  >;
  const binding = implement('invoicing.identity.v1.IdentityService', IdentityServiceService, handlers, log);

  it('answers gRPC health in plaintext on GRPC_HEALTH_PORT, and nothing else there', async () => {
    const server = await startGrpcServer({ bindings: [restrict(binding, { callers: ['gateway'] })], log, tls: loadMeshTls(ca.dir('identity')), healthPort: 0 });
    const healthAddress = `127.0.0.1:${server.healthPort}`;
    const onHealthPort = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', healthAddress, null);
    try {
      expect(await checkHealth(healthAddress)).toBe('SERVING');
      expect(await checkHealth(server.address, '', 1000)).toBe('UNREACHABLE'); // the service port wants TLS
      await expect(onHealthPort.getUser({ user_id: 1 })).rejects.toMatchObject({ status: grpc.status.UNIMPLEMENTED });
    } finally {
      onHealthPort.close();
      await server.shutdown();
    }
    expect(await checkHealth(healthAddress, '', 500)).toBe('UNREACHABLE');
  });

  it('refuses to start a binding that names no callers (nobody could call it)', async () => {
    await expect(startGrpcServer({ bindings: [binding], log, tls: loadMeshTls(ca.dir('identity')) })).rejects.toThrow(/names no callers/);
  });
});

/** Handlers that fail if ever reached: a refused call must never get that far. */
function unreachable<S extends grpc.ServiceDefinition>(definition: S): AsyncHandlers<S> {
  return Object.fromEntries(
    Object.keys(definition).map((k) => [
      k,
      () => {
        throw new Error(`${k} reached its handler`);
      },
    ]),
  ) as unknown as AsyncHandlers<S>;
}

describe('a caller outside a binding\'s callers, under mTLS', () => {
  const ca = createTestCa();
  const expenses = implement('invoicing.expenses.v1.ExpensesService', ExpensesServiceService, unreachable(ExpensesServiceService), log);
  let server: Awaited<ReturnType<typeof startGrpcServer>>;
  let rendering: ReturnType<typeof connect<typeof ExpensesServiceService>>;
  beforeAll(async () => {
    server = await startGrpcServer({ bindings: [restrict(expenses, { callers: ['gateway'] })], log, tls: loadMeshTls(ca.dir('expenses')) });
    rendering = connect(ExpensesServiceService, 'invoicing.expenses.v1.ExpensesService', server.address, loadMeshTls(ca.dir('rendering')));
  });
  afterAll(async () => {
    rendering.close();
    await server.shutdown();
  });

  it('gets PERMISSION_DENIED on a unary RPC', async () => {
    await expect(rendering.getExpense({ tenant: { account_id: 1, livemode: true }, id: 1 })).rejects.toMatchObject({ status: grpc.status.PERMISSION_DENIED });
  });

  it('gets PERMISSION_DENIED on a server-streaming RPC (not UNKNOWN)', async () => {
    const read = async () => {
      for await (const _ of rendering.getExpenseFile({ tenant: { account_id: 1, livemode: true }, id: 1 })) void _;
    };
    await expect(read()).rejects.toMatchObject({ status: grpc.status.PERMISSION_DENIED, detail: { message: 'rendering may not call invoicing.expenses.v1.ExpensesService' } });
  });

  it('gets PERMISSION_DENIED on a client-streaming RPC', async () => {
    await expect(rendering.uploadExpense([{ chunk: Buffer.from('x') }])).rejects.toMatchObject({ status: grpc.status.PERMISSION_DENIED });
  });
});

describe('a plaintext server beyond loopback', () => {
  const binding = implement('invoicing.identity.v1.IdentityService', IdentityServiceService, unreachable(IdentityServiceService), log);
  const consent = process.env[PLAINTEXT_NETWORK_SETTING];
  afterEach(() => {
    if (consent === undefined) delete process.env[PLAINTEXT_NETWORK_SETTING];
    else process.env[PLAINTEXT_NETWORK_SETTING] = consent;
  });

  it('refuses to start on 0.0.0.0 without mTLS, naming the setting that binds it and the one that would allow it', async () => {
    delete process.env[PLAINTEXT_NETWORK_SETTING];
    await expect(startGrpcServer({ bindings: [binding], host: '0.0.0.0', log, tls: null })).rejects.toThrow(
      /^GRPC_HOST=0\.0\.0\.0 listens beyond loopback without mTLS.*GRPC_TLS_DIR.*GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK=i-understand/,
    );
  });

  it('names ADMIN_GRPC_HOST when the admin services are the ones bound beyond loopback', async () => {
    delete process.env[PLAINTEXT_NETWORK_SETTING];
    const admin = restrict(binding, { callers: ['admin'], admin: true });
    await expect(startServiceServers({ bindings: [admin], adminHost: '0.0.0.0', log, tls: null })).rejects.toThrow(/^ADMIN_GRPC_HOST=0\.0\.0\.0 listens beyond loopback/);
  });

  it('refuses any other value of the setting than the consent itself', async () => {
    process.env[PLAINTEXT_NETWORK_SETTING] = 'true';
    await expect(startGrpcServer({ bindings: [binding], host: '0.0.0.0', log, tls: null })).rejects.toThrow(/GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK=true is not that value/);
  });

  it('starts with GRPC_INSECURE_ALLOW_PLAINTEXT_NETWORK=i-understand', async () => {
    process.env[PLAINTEXT_NETWORK_SETTING] = 'i-understand';
    const server = await startGrpcServer({ bindings: [binding], host: '0.0.0.0', log, tls: null });
    try {
      expect(await checkHealth(server.address)).toBe('SERVING');
    } finally {
      await server.shutdown();
    }
  });

  it('starts on 0.0.0.0 under mTLS without the setting', async () => {
    delete process.env[PLAINTEXT_NETWORK_SETTING];
    const ca = createTestCa();
    const server = await startGrpcServer({ bindings: [restrict(binding, { callers: ['gateway'] })], host: '0.0.0.0', log, tls: loadMeshTls(ca.dir('identity')) });
    await server.shutdown();
  });

  it('loopback is 127.0.0.0/8, ::1 and localhost; anything else is the network', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.1', 'identity', '128.0.0.1', '127.0.0.1.nip.io']) expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('the embedded mode\'s Unix sockets', () => {
  const binding = implement('invoicing.identity.v1.IdentityService', IdentityServiceService, unreachable(IdentityServiceService), log);

  it('live in DATA_DIR/grpc (0700), each socket 0600, and serve gRPC', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sockets-'));
    const sockets = privateSocketDirectory(dataDir);
    expect(sockets.dir).toBe(path.join(dataDir, 'grpc'));
    const server = await startGrpcServer({ bindings: [binding], socket: sockets.socket('identity'), log, tls: null });
    try {
      expect(server.address).toBe(`unix:${path.join(dataDir, 'grpc', 'identity.sock')}`);
      expect(statSync(sockets.dir).mode & 0o777).toBe(0o700);
      expect(statSync(path.join(sockets.dir, 'identity.sock')).mode & 0o777).toBe(0o600);
      expect(await checkHealth(server.address)).toBe('SERVING');
    } finally {
      await server.shutdown();
    }
  });

  it('a socket left by a killed process is replaced, not a start failure', async () => {
    const sockets = privateSocketDirectory(mkdtempSync(path.join(os.tmpdir(), 'sockets-')));
    const first = await startGrpcServer({ bindings: [binding], socket: sockets.socket('identity'), log, tls: null });
    // Not shut down: its socket file stays, as after SIGKILL.
    const second = await startGrpcServer({ bindings: [binding], socket: sockets.socket('identity'), log, tls: null });
    try {
      expect(await checkHealth(second.address)).toBe('SERVING');
    } finally {
      await Promise.all([first.shutdown(), second.shutdown()]);
    }
  });

  it('a DATA_DIR too deep for a socket address gets a private temporary directory (0700) instead', () => {
    const deep = path.join(mkdtempSync(path.join(os.tmpdir(), 'sockets-')), 'a'.repeat(90));
    const sockets = privateSocketDirectory(deep);
    try {
      expect(sockets.dir.startsWith(os.tmpdir())).toBe(true);
      expect(sockets.dir.startsWith(deep)).toBe(false);
      expect(statSync(sockets.dir).mode & 0o777).toBe(0o700);
    } finally {
      sockets.remove();
    }
  });
});
