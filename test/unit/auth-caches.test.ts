// The gateway's identity caches (principals, workspace access) stay within their staleness bound,
// AUTH_CACHE_TTL_MS (docs/decisions.md, "Authentication"), whatever the interleaving. The identity
// client is a fake whose answers the test releases by hand, so "a revocation arrives while a lookup is
// in flight" is driven, not hoped for.
import { randomBytes } from 'node:crypto';
import { CredentialType, Principal } from '../../gen/invoicing/identity/v1/identity';
import { PrincipalCache } from '../../gateway/auth/principals';
import { WorkspaceAccess } from '../../gateway/auth/workspace';
import { mintToken } from '../../services/shared/credentials';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}
const deferred = <T>(): Deferred<T> => {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

/** A fake identity client: every call waits for the test to answer it. */
function fakeIdentity() {
  const calls: Array<{ method: string; answer: Deferred<unknown> }> = [];
  const call = (method: string) => () => {
    const answer = deferred<unknown>();
    calls.push({ method, answer });
    return answer.promise;
  };
  const client = { authenticate: call('authenticate'), getAccountAccess: call('getAccountAccess') };
  /** Lets the pending lookup start (it registers its call on a later tick). */
  const settle = () => new Promise((r) => setImmediate(r));
  return { client: client as any, calls, settle }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const principalOf = (overrides: Partial<Principal> = {}): Principal => ({
  credential_type: CredentialType.CREDENTIAL_TYPE_SESSION,
  user_id: 7,
  account_id: 0,
  livemode: true,
  scopes: ['read:invoices'],
  credential_id: 'session_1',
  expires_at: '',
  ...overrides,
});
const bearer = () => `Bearer ${mintToken('pat', randomBytes(32))}`;

describe('principal cache: nothing outlives the TTL', () => {
  it('does not cache a session whose remaining lifetime computes to 0 ms (lru-cache would keep it forever)', async () => {
    const identity = fakeIdentity();
    const cache = new PrincipalCache(identity.client, 60_000);
    const auth = bearer();
    const resolving = cache.resolve(auth, 'req_1');
    await identity.settle();
    identity.calls[0].answer.resolve({ principal: principalOf({ expires_at: new Date(Date.now()).toISOString() }) });
    await resolving;
    expect(cache.cached(auth)).toBeUndefined();
  });

  it('does not cache a session that ended before the answer arrived', async () => {
    const identity = fakeIdentity();
    const cache = new PrincipalCache(identity.client, 60_000);
    const auth = bearer();
    const resolving = cache.resolve(auth, 'req_1');
    await identity.settle();
    identity.calls[0].answer.resolve({ principal: principalOf({ expires_at: new Date(Date.now() - 5_000).toISOString() }) });
    await resolving;
    expect(cache.cached(auth)).toBeUndefined();
  });

  it('counts the TTL from when the lookup started: an answer that took a whole TTL is not cached', async () => {
    let clock = 1_000_000;
    const identity = fakeIdentity();
    const cache = new PrincipalCache(identity.client, 60_000, () => clock);
    const auth = bearer();
    const resolving = cache.resolve(auth, 'req_1');
    await identity.settle();
    clock += 60_000;
    identity.calls[0].answer.resolve({ principal: principalOf({ credential_id: 'key_1' }) });
    await resolving;
    expect(cache.cached(auth)).toBeUndefined();
  });

  it('caches a valid principal (one identity call per credential per TTL)', async () => {
    const identity = fakeIdentity();
    const cache = new PrincipalCache(identity.client, 60_000);
    const auth = bearer();
    const resolving = cache.resolve(auth, 'req_1');
    await identity.settle();
    identity.calls[0].answer.resolve({ principal: principalOf({ credential_id: 'key_1' }) });
    await resolving;
    expect(cache.cached(auth)?.credential_id).toBe('key_1');
  });
});

describe('principal cache: a revocation overtaking a lookup', () => {
  it('lookup started, revocation delivered, lookup completes → not cached; the next request asks identity again', async () => {
    const identity = fakeIdentity();
    const cache = new PrincipalCache(identity.client, 60_000);
    const auth = bearer();
    const inFlight = cache.resolve(auth, 'req_1');
    await identity.settle();
    expect(identity.calls).toHaveLength(1);

    cache.evictCredential('key_9'); // the revocation event arrives while identity still answers
    identity.calls[0].answer.resolve({ principal: principalOf({ credential_id: 'key_9' }) });
    await inFlight;

    expect(cache.cached(auth)).toBeUndefined();
    const next = cache.resolve(auth, 'req_2');
    await identity.settle();
    expect(identity.calls).toHaveLength(2); // not served from a re-cached, revoked principal
    identity.calls[1].answer.resolve({ principal: undefined }); // identity now refuses it
    await expect(next).rejects.toMatchObject({ status: 401 });
  });

  it('a revocation of another credential does not keep this one from being cached', async () => {
    const identity = fakeIdentity();
    const cache = new PrincipalCache(identity.client, 60_000);
    const auth = bearer();
    const inFlight = cache.resolve(auth, 'req_1');
    await identity.settle();
    cache.evictCredential('key_other');
    identity.calls[0].answer.resolve({ principal: principalOf({ credential_id: 'key_9' }) });
    await inFlight;
    expect(cache.cached(auth)?.credential_id).toBe('key_9');
  });

  it('a lookup started after the revocation caches as usual', async () => {
    const identity = fakeIdentity();
    const cache = new PrincipalCache(identity.client, 60_000);
    const auth = bearer();
    const first = cache.resolve(auth, 'req_1'); // keeps a lookup in flight across the revocation
    await identity.settle();
    cache.evictCredential('key_9');
    const later = bearer();
    const second = cache.resolve(later, 'req_2');
    await identity.settle();
    identity.calls[1].answer.resolve({ principal: principalOf({ credential_id: 'key_9' }) });
    await second;
    identity.calls[0].answer.resolve({ principal: principalOf({ credential_id: 'key_9' }) });
    await first;
    expect(cache.cached(auth)).toBeUndefined(); // the overtaken one
    expect(cache.cached(later)?.credential_id).toBe('key_9');
  });
});

describe('workspace-access cache: a change overtaking a lookup', () => {
  const access = { account_id: 5, suspended: false, subscription: { active: true, features: [], caps: {}, quotas: {} } };
  const member = principalOf({ credential_type: CredentialType.CREDENTIAL_TYPE_PERSONAL_ACCESS_TOKEN, credential_id: 'key_1' });

  it('lookup started, workspace change delivered, lookup completes → not cached; the next request asks identity again', async () => {
    const identity = fakeIdentity();
    const workspaces = new WorkspaceAccess(identity.client, 60_000, () => 'https://upgrade');
    const first = workspaces.resolve(member, 5, false, 'req_1');
    await identity.settle();
    workspaces.evictAccount(5); // e.g. suspended or membership removed
    identity.calls[0].answer.resolve(access);
    await first;

    const next = workspaces.resolve(member, 5, false, 'req_2');
    expect(next).toBeInstanceOf(Promise); // not answered from the cache
    await identity.settle();
    expect(identity.calls).toHaveLength(2);
    identity.calls[1].answer.resolve({ ...access, suspended: true });
    await next;
  });

  it('counts the TTL from when the lookup started', async () => {
    let clock = 1_000_000;
    const identity = fakeIdentity();
    const workspaces = new WorkspaceAccess(identity.client, 60_000, () => 'https://upgrade', () => clock);
    const first = workspaces.resolve(member, 5, false, 'req_1');
    await identity.settle();
    clock += 60_000;
    identity.calls[0].answer.resolve(access);
    await first;
    expect(workspaces.resolve(member, 5, false, 'req_2')).toBeInstanceOf(Promise);
  });

  it('caches an answer otherwise', async () => {
    const identity = fakeIdentity();
    const workspaces = new WorkspaceAccess(identity.client, 60_000, () => 'https://upgrade');
    const first = workspaces.resolve(member, 5, false, 'req_1');
    await identity.settle();
    identity.calls[0].answer.resolve(access);
    await first;
    expect(workspaces.resolve(member, 5, false, 'req_2')).not.toBeInstanceOf(Promise);
  });
});
