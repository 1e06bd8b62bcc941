// The identity events, as outbox entries of the record whose change they announce.
import { OutboxEntry } from '../../shared/outbox/entries';
import { IdentityEvents } from '../ports/events';
import { IdentityEventPayload } from '../ports/identity-store';

export type IdentityEventEntry = Omit<OutboxEntry<IdentityEventPayload>, 'seq'>;

export class IdentityEventFactory {
  constructor(private readonly events: IdentityEvents) {}

  private entry(type: string, payload: IdentityEventPayload): IdentityEventEntry {
    return { id: this.events.newId(), type, occurred_at: new Date().toISOString(), payload };
  }

  /** A key or session stopped being valid. */
  credentialRevoked(credentialId: string): IdentityEventEntry {
    return this.entry('identity.credential.revoked', { credential_revoked: { credential_id: credentialId } });
  }

  /** Membership, subscription, suspension or legal identity of a workspace changed. */
  workspaceChanged(accountId: number, userId = 0): IdentityEventEntry {
    return this.entry('identity.workspace.changed', { workspace_changed: { account_id: accountId, user_id: userId } });
  }
}
