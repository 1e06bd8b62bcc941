// Identity's revocations and workspace changes travel in an outbox written by the same write as the change
// (the shared relay publishes them), so a bus outage delays them instead of losing them — and never fails
// or half-applies the revocation itself.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Event } from '../../gen/invoicing/events/v1/events';
import { identityStore } from '../../services/identity/adapters/identity-store';
import { identityOutboxes } from '../../services/identity/adapters/outbox';
import { Identity } from '../../services/identity/domain/identity';
import { IdentityStore } from '../../services/identity/ports/identity-store';
import { PasswordHasher, SessionSigner } from '../../services/identity/ports/security';
import { MemoryEventBus } from '../../services/shared/bus/memory';
import { BusMessage, EventBus, TOPICS } from '../../services/shared/bus/port';
import { fromMessage } from '../../services/shared/events';
import { createLogger } from '../../services/shared/logger';
import { OutboxRelay } from '../../services/shared/outbox/relay';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';

class FlakyBus implements EventBus {
  down = false;
  private readonly inner = new MemoryEventBus();
  async publish(topic: string, messages: BusMessage[]) {
    if (this.down) throw new Error('broker unreachable');
    await this.inner.publish(topic, messages);
  }
  subscribe: EventBus['subscribe'] = (...args) => this.inner.subscribe(...args);
  close = () => this.inner.close();
}

/** Plain-text stand-ins for scrypt and JWTs: this suite is about events, not cryptography. */
const passwords: PasswordHasher = { hash: async (p) => `plain:${p}`, verify: async (p, stored) => stored === `plain:${p}` };
const sessions: SessionSigner = {
  sign: async (c) => `s.${c.userId}-${c.sessionId}-${c.expiresAt.getTime()}.x`,
  verify: async (token) => {
    const [userId, sessionId, expires] = token.split('.')[1].split('-').map(Number);
    return { userId, sessionId, expiresAt: new Date(expires) };
  },
};

const log = createLogger('test');
log.level = 'silent';

let store: IdentityStore;
let bus: FlakyBus;
let relay: OutboxRelay;
let identity: Identity;
let seen: Event[];

beforeEach(async () => {
  store = identityStore(new SqliteDocumentStore(path.join(mkdtempSync(path.join(os.tmpdir(), 'identity-unit-')), 'invoicing.db')));
  bus = new FlakyBus();
  relay = new OutboxRelay(identityOutboxes(store), bus, log, { intervalMs: 20 });
  identity = new Identity(
    store,
    passwords,
    sessions,
    { bytes: (n) => new Uint8Array(n).map(() => Math.floor(Math.random() * 256)) },
    { newId: () => randomUUID(), written: () => relay.notify() },
    { put: async () => undefined, signedUrl: async () => '' },
  );
  seen = [];
  await bus.subscribe(TOPICS.identity, { group: 'test', fromBeginning: true }, async (m) => {
    seen.push(fromMessage(m));
  });
});
afterEach(() => relay.stop());

const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** Until no record has pending events (the relay has finished what it was woken for). */
async function idle() {
  for (const c of [store.apiKeys, store.sessions, store.accounts, store.memberships]) {
    for (let i = 0; (await c.count({ outbox_pending: true })) > 0; i++) {
      if (i > 500) throw new Error('outbox not drained');
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

async function workspaceWithKey() {
  await identity.createUser('owner@example.com', 'password-1', 'Owner');
  const account = await identity.createWorkspace('owner@example.com', 'ACME');
  const { token } = await identity.createApiKey({ kind: 'live', accountId: account.id, scopes: ['all'] });
  // The set-up's own event (the owner's membership), relayed by the wake-up after its write.
  await until(() => seen.length === 1);
  await idle();
  seen.length = 0;
  return { account, token };
}

describe('identity events: through an outbox', () => {
  it('revocations and workspace changes made while the bus is down are delivered, each once, after it returns', async () => {
    const { account, token } = await workspaceWithKey();
    await identity.createUser('member@example.com', 'password-2', 'Member');
    const { token: session } = await identity.signIn('owner@example.com', 'password-1');
    relay.start();
    bus.down = true;
    const keyId = await identity.revokeApiKey(token);
    const sessionId = await identity.signOut(session);
    await identity.setSuspended(account.id, true);
    await identity.setPlan(account.id, { caps: { bank_accounts: 1 }, quotas: {} });
    const member = await identity.addMember(account.id, 'member@example.com');
    await new Promise((r) => setTimeout(r, 200)); // the relay has tried, and failed, meanwhile
    expect(seen).toHaveLength(0);
    bus.down = false;
    await until(() => seen.length >= 5);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toHaveLength(5);
    expect(seen.map((e) => [e.type, e.account_id, e.credential_revoked ?? e.workspace_changed]).sort()).toEqual(
      [
        ['identity.credential.revoked', account.id, { credential_id: keyId }],
        ['identity.credential.revoked', 0, { credential_id: sessionId }],
        ['identity.workspace.changed', account.id, { account_id: account.id, user_id: 0 }],
        ['identity.workspace.changed', account.id, { account_id: account.id, user_id: 0 }],
        ['identity.workspace.changed', account.id, { account_id: account.id, user_id: member.user_id }],
      ].sort(),
    );
    // The account's two changes, in the order they were written.
    expect(seen.filter((e) => e.workspace_changed && e.workspace_changed.user_id === 0).map((e) => e.sequence)).toEqual([1, 2]);
    expect(new Set(seen.map((e) => e.id)).size).toBe(5);
  });

  it('a revocation while the bus is down succeeds and takes effect at once; its event waits in the key’s own record', async () => {
    const { token } = await workspaceWithKey();
    bus.down = true;
    await expect(identity.revokeApiKey(token)).resolves.toMatch(/^key_\d+$/);
    await expect(identity.authenticate(token)).rejects.toMatchObject({ code: 'revoked_credentials' });
    const [key] = await store.apiKeys.list({ where: { outbox_pending: true }, limit: 10 });
    expect(key.outbox).toEqual([expect.objectContaining({ type: 'identity.credential.revoked', seq: 1 })]);
  });

  it('revoking twice writes one event', async () => {
    const { token } = await workspaceWithKey();
    await identity.revokeApiKey(token);
    await identity.revokeApiKey(token);
    await until(() => seen.length >= 1);
    await idle();
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.map((e) => e.type)).toEqual(['identity.credential.revoked']);
  });
});
