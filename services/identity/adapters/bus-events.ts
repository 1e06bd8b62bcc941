import { EventBus, TOPICS } from '../../shared/bus/port';
import { publishEvents } from '../../shared/events';
import { IdentityEvents } from '../ports/events';

export function busIdentityEvents(bus: EventBus): IdentityEvents {
  return {
    credentialRevoked: (credentialId, accountId) =>
      publishEvents(bus, TOPICS.identity, [
        { type: 'identity.credential.revoked', account_id: accountId, livemode: true, credential_revoked: { credential_id: credentialId } },
      ]),
    workspaceChanged: (accountId, userId = 0) =>
      publishEvents(bus, TOPICS.identity, [
        { type: 'identity.workspace.changed', account_id: accountId, livemode: true, workspace_changed: { account_id: accountId, user_id: userId } },
      ]),
  };
}
