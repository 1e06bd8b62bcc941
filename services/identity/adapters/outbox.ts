// The identity outboxes on the shared relay (services/shared/outbox/relay.ts): revocations and workspace
// changes go to the identity topic, keyed by the workspace concerned (0 for a user's session).
import { TOPICS } from '../../shared/bus/port';
import { AnyOutboxSource, OutboxSource } from '../../shared/outbox/relay';
import { AccountRecord, ApiKeyRecord, IdentityStore, MembershipRecord, SessionRecord } from '../ports/identity-store';

export function identityOutboxes(store: IdentityStore): AnyOutboxSource[] {
  const topic = TOPICS.identity;
  const apiKeys: OutboxSource<ApiKeyRecord> = { name: 'api_keys', collection: store.apiKeys, topic, envelope: (k) => ({ account_id: k.account_id ?? 0, livemode: true }) };
  const sessions: OutboxSource<SessionRecord> = { name: 'sessions', collection: store.sessions, topic, envelope: () => ({ account_id: 0, livemode: true }) };
  const accounts: OutboxSource<AccountRecord> = { name: 'accounts', collection: store.accounts, topic, envelope: (a) => ({ account_id: a.id, livemode: true }) };
  const memberships: OutboxSource<MembershipRecord> = {
    name: 'memberships',
    collection: store.memberships,
    topic,
    envelope: (m) => ({ account_id: m.account_id, livemode: true }),
  };
  return [apiKeys, sessions, accounts, memberships];
}
