// The internal network's plumbing in one process (docs/architecture.md "Internal network"): which
// failed calls a client retries, the plaintext health-only port beside an mTLS server, and a binding
// that names no callers refusing to start under mTLS.
import * as grpc from '@grpc/grpc-js';
import { IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { ERROR_TRAILER } from '../../services/shared/grpc/errors';
import { loadMeshTls } from '../../services/shared/grpc/mesh';
import { isRetryable, withRetries } from '../../services/shared/grpc/retry';
import { checkHealth, startGrpcServer } from '../../services/shared/grpc/server';
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
