import { countingWrites, storeChangeCounters } from '../../shared/change-counters';
import { DocumentStore } from '../../shared/store/port';
import { AccountRecord, ApiKeyRecord, IdentityStore, MembershipRecord, SessionRecord, UserRecord } from '../ports/identity-store';

/** What the outbox relay queries: pending records, oldest first. */
const OUTBOX_INDEX = ['outbox_pending', 'outbox_order'];

export function identityStore(store: DocumentStore): IdentityStore {
  return {
    users: store.collection<UserRecord>({ name: 'users', uniqueKeys: (u) => [`email:${u.email}`], indexes: [['email']] }),
    // Every write of a workspace (legal identity, logo, name…) bumps its change counter before it
    // resolves: the rendering service validates its cached ETags against it (shared/change-counters.ts).
    accounts: countingWrites(store.collection<AccountRecord>({ name: 'accounts', indexes: [OUTBOX_INDEX] }), storeChangeCounters(store), 'accounts'),
    memberships: store.collection<MembershipRecord>({
      name: 'memberships',
      uniqueKeys: (m) => [`member:${m.user_id}:${m.account_id}`],
      indexes: [['user_id', 'account_id'], OUTBOX_INDEX],
    }),
    apiKeys: store.collection<ApiKeyRecord>({ name: 'api_keys', uniqueKeys: (k) => [`hash:${k.token_hash}`], indexes: [['token_hash'], OUTBOX_INDEX] }),
    sessions: store.collection<SessionRecord>({ name: 'sessions', indexes: [OUTBOX_INDEX] }),
    nextId: (kind) => store.nextId(`identity.${kind}`),
  };
}
