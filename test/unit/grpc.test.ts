// The shared gRPC plumbing: request ids travel in metadata, DomainErrors arrive as status + detail,
// health turns NOT_SERVING while a server drains, and int64 ids keep their precision.
import { status } from '@grpc/grpc-js';
import { GetUserRequest, GetUserResponse, IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { fail } from '../../services/shared/errors';
import { RemoteCallError } from '../../services/shared/grpc/errors';
import { checkHealth, RunningServer, startGrpcServer } from '../../services/shared/grpc/server';
import { AsyncHandlers, CallContext, connect, implement } from '../../services/shared/grpc/typed';
import { createLogger } from '../../services/shared/logger';

const log = createLogger('test');
let server: RunningServer;
let seenRequestId = '';
let seenIdempotency: CallContext['idempotency'];

const unused = async () => {
  throw new Error('not used by this test');
};

beforeAll(async () => {
  const getUser = async (req: GetUserRequest, ctx: CallContext): Promise<GetUserResponse> => {
    seenRequestId = ctx.requestId;
    seenIdempotency = ctx.idempotency;
    if (req.user_id === 404) throw fail.notFound('user');
    if (req.user_id === 422) throw fail.invalid('bad_thing', 'thing is bad', 'thing');
    if (req.user_id === 500) throw new Error('boom: secret detail');
    return { user: { id: req.user_id, email: 'x@example.com', name: '', created_at: '', updated_at: '' } };
  };
  const handlers = {
    ...Object.fromEntries(Object.keys(IdentityServiceService).map((k) => [k, unused])),
    getUser,
  } as unknown as AsyncHandlers<typeof IdentityServiceService>;
  server = await startGrpcServer({ bindings: [implement('invoicing.identity.v1.IdentityService', IdentityServiceService, handlers, log)], log });
});

const client = () => connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', server.address);

describe('gRPC calls', () => {
  it('propagate the request id in metadata', async () => {
    await client().getUser({ user_id: 1 }, { requestId: 'req_abc123456' });
    expect(seenRequestId).toBe('req_abc123456');
  });

  it('carry an idempotency token (scoped key, fingerprint) in metadata, and none when the call has none', async () => {
    const idempotency = { key: 'k3y_-scoped', fingerprint: 'fp_-1' };
    await client().getUser({ user_id: 1 }, { idempotency });
    expect(seenIdempotency).toEqual(idempotency);
    await client().getUser({ user_id: 1 });
    expect(seenIdempotency).toBeUndefined();
  });

  it('turn DomainErrors into a status code plus an error detail', async () => {
    const c = client();
    await expect(c.getUser({ user_id: 404 })).rejects.toMatchObject({ status: status.NOT_FOUND, detail: { code: 'resource_not_found' } });
    const err = (await c.getUser({ user_id: 422 }).catch((e) => e)) as RemoteCallError;
    expect(err).toBeInstanceOf(RemoteCallError);
    expect(err.status).toBe(status.INVALID_ARGUMENT);
    expect(err.detail).toMatchObject({ code: 'bad_thing', field: 'thing', message: 'thing is bad' });
  });

  it('hide unexpected errors behind INTERNAL without their message', async () => {
    const err = (await client().getUser({ user_id: 500 }).catch((e) => e)) as RemoteCallError;
    expect(err.status).toBe(status.INTERNAL);
    expect(err.message).not.toContain('secret');
  });

  it('carry int64 ids up to 2^53-1 exactly, and refuse larger ones instead of rounding', async () => {
    const max = Number.MAX_SAFE_INTEGER;
    const { user } = await client().getUser({ user_id: max });
    expect(user?.id).toBe(max);
    const bytes = GetUserResponse.encode({ user: { id: max, email: '', name: '', created_at: '', updated_at: '' } }).finish();
    expect(GetUserResponse.decode(bytes).user?.id).toBe(max);
    // A wire value of 2^53 + 1 (varint) does not fit a JS number: decoding throws.
    const tooBig = Buffer.from([0x0a, 0x09, 0x08, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]);
    expect(() => GetUserResponse.decode(tooBig)).toThrow();
  });
});

describe('health and graceful shutdown', () => {
  it('reports SERVING, then NOT_SERVING while draining, then stops', async () => {
    expect(await checkHealth(server.address)).toBe('SERVING');
    expect(await checkHealth(server.address, 'invoicing.identity.v1.IdentityService')).toBe('SERVING');
    const stopping = server.shutdown(500);
    await new Promise((r) => setTimeout(r, 100));
    expect(await checkHealth(server.address)).toBe('NOT_SERVING');
    await stopping;
    expect(await checkHealth(server.address, '', 500)).toBe('UNREACHABLE');
  });
});
