import { DocumentStore } from '../../shared/store/port';
import { AccountRecord, ApiKeyRecord, IdentityStore, MembershipRecord, SessionRecord, UserRecord } from '../ports/identity-store';

/** What the outbox relay queries: pending records, oldest first. */
const OUTBOX_INDEX = ['outbox_pending', 'outbox_order'];

export function identityStore(store: DocumentStore): IdentityStore {
  return {
    users: store.collection<UserRecord>({ name: 'users', uniqueKeys: (u) => [`email:${u.email}`], indexes: [['email']] }),
    accounts: store.collection<AccountRecord>({ name: 'accounts', indexes: [OUTBOX_INDEX] }),
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
