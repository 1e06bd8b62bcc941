// The caller's deadline travels with every call (services/shared/grpc/deadline.ts, typed.ts): a handler
// sees it as ctx.deadline, and a call it makes onwards with { deadline: ctx.deadline } ends when the
// first caller's does — never a fresh 10 s per hop.
import { GetUserRequest, GetUserResponse, IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { outgoingDeadline } from '../../services/shared/grpc/deadline';
import { RunningServer, startGrpcServer } from '../../services/shared/grpc/server';
import { AsyncHandlers, CallContext, connect, implement } from '../../services/shared/grpc/typed';
import { createLogger } from '../../services/shared/logger';

const log = createLogger('test');
let server: RunningServer;
const seen: Record<number, number | undefined> = {};
/** When each handler ran, and when user 2's handler made its onward call (the onward hop's transit). */
const receivedAt: Record<number, number> = {};
let onwardSentAt = 0;

const unused = async () => {
  throw new Error('not used by this test');
};

let shared: ReturnType<typeof connect<typeof IdentityServiceService>> | undefined;
const client = () => (shared ??= connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', server.address));

beforeAll(async () => {
  const getUser = async (req: GetUserRequest, ctx: CallContext): Promise<GetUserResponse> => {
    seen[req.user_id] = ctx.deadline;
    receivedAt[req.user_id] = Date.now();
    // user 2 asks for user 1 onwards (service → service), passing its own deadline on; user 3 does not.
    if (req.user_id === 2) {
      onwardSentAt = Date.now();
      await client().getUser({ user_id: 1 }, { deadline: ctx.deadline });
    }
    if (req.user_id === 3) await client().getUser({ user_id: 4 });
    return { user: { id: req.user_id, email: 'x@example.com', name: '', created_at: '', updated_at: '' } };
  };
  const handlers = {
    ...Object.fromEntries(Object.keys(IdentityServiceService).map((k) => [k, unused])),
    getUser,
  } as unknown as AsyncHandlers<typeof IdentityServiceService>;
  server = await startGrpcServer({ bindings: [implement('invoicing.identity.v1.IdentityService', IdentityServiceService, handlers, log)], log });
});

afterAll(async () => {
  shared?.close();
  await server?.shutdown(0);
});

describe('the caller deadline', () => {
  it('reaches the handler as ctx.deadline and is passed on unchanged to the next service (gateway → service → service)', async () => {
    const sent = Date.now();
    await client().getUser({ user_id: 2 }, { timeoutMs: 3000 });
    const outer = seen[2]!;
    const inner = seen[1]!;
    // The server computes it from the relative grpc-timeout on receipt: within transit time of the caller's.
    expect(outer).toBeGreaterThan(sent + 3000 - 1000);
    expect(outer).toBeLessThanOrEqual(Date.now() + 3000);
    // The onward call ends with the first caller's deadline, not 10 s after it started. gRPC carries it as
    // a relative timeout, so the receiver's copy is later by the hop's transit (measured here, a few ms
    // on an idle machine, more on a busy one) plus a millisecond of rounding.
    const transit = receivedAt[1] - onwardSentAt;
    expect(inner).toBeLessThanOrEqual(outer + transit + 2);
    expect(inner).toBeGreaterThan(outer - 1000);
  });

  it('without it, an onward call gets the default 10 s of its own (what every hop did before)', async () => {
    await client().getUser({ user_id: 3 }, { timeoutMs: 3000 });
    expect(seen[4]! - seen[3]!).toBeGreaterThan(5000);
  });

  it('an outgoing call never outlives the caller: the earlier of its own timeout and the caller deadline', () => {
    const now = Date.now();
    expect(outgoingDeadline(now + 1000, 10_000)).toBe(now + 1000);
    expect(outgoingDeadline(undefined, 10_000)).toBeGreaterThanOrEqual(now + 10_000);
    expect(outgoingDeadline(now + 60_000, 10_000)).toBeLessThan(now + 60_000);
  });
});
