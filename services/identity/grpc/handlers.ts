// Thin gRPC handlers: decode, call the domain, encode. Errors are DomainErrors thrown by the domain.
import { CredentialType, IdentityAdminServiceService, IdentityServiceService } from '../../../gen/invoicing/identity/v1/identity';
import { fail } from '../../shared/errors';
import { AsyncHandlers } from '../../shared/grpc/typed';
import { CursorCodec } from '../../shared/pagination';
import { AccountView } from '../domain/accounts';
import { Identity } from '../domain/identity';
import { fromLegalIdentityMessage, toAccountMessage, toPrincipalMessage, toUserMessage } from './mapping';

/** An account message with a freshly signed logo link. */
async function present(identity: Identity, view: AccountView) {
  return toAccountMessage(view, await identity.logoUrl(view));
}

export function identityHandlers(identity: Identity, cursors: CursorCodec): AsyncHandlers<typeof IdentityServiceService> {
  const account = (view: AccountView) => present(identity, view);
  return {
    authenticate: async (req) => ({ principal: toPrincipalMessage(await identity.authenticate(req.credential)) }),
    signIn: async (req) => identity.signIn(req.email, req.password),
    signOut: async (req) => ({ session_id: await identity.signOut(req.token) }),
    getUser: async (req) => ({ user: toUserMessage(await identity.getUser(req.user_id)) }),
    getAccountAccess: async (req) => identity.accountAccess(req.user_id, req.account_id),
    listUserAccounts: async (req) => {
      const filterKey = `user_accounts|${req.user_id}`;
      const page = cursors.resolve(req.page, filterKey);
      const rows = await identity.listUserAccounts(req.user_id, page.limit + 1, page.after?.[0] as number | undefined);
      const { items, page_info } = cursors.page(rows, page.limit, (row) => [row.position], filterKey);
      return { accounts: await Promise.all(items.map((row) => account(row.account))), page_info };
    },
    getUserAccount: async (req) => ({ account: await account(await identity.getUserAccount(req.user_id, req.account_id)) }),
    setDefaultAccount: async (req) => ({ account: await account(await identity.setDefaultAccount(req.user_id, req.account_id)) }),
    getAccount: async (req) => ({ account: await account(await identity.getAccount(req.account_id)) }),
  };
}

const KIND_OF: Partial<Record<CredentialType, 'pat' | 'workspace'>> = {
  [CredentialType.CREDENTIAL_TYPE_PERSONAL_ACCESS_TOKEN]: 'pat',
  [CredentialType.CREDENTIAL_TYPE_WORKSPACE_TOKEN]: 'workspace',
};

export function identityAdminHandlers(identity: Identity): AsyncHandlers<typeof IdentityAdminServiceService> {
  return {
    createUser: async (req) => ({ user: toUserMessage(await identity.createUser(req.email, req.password, req.name)) }),
    createWorkspace: async (req) => ({ account_id: (await identity.createWorkspace(req.owner_email, req.name)).id }),
    addMember: async (req) => identity.addMember(req.account_id, req.email),
    setWorkspaceSuspended: async (req) => {
      const a = await identity.setSuspended(req.account_id, req.suspended);
      return { account_id: a.id, suspended: a.suspended };
    },
    setLegalIdentity: async (req) => {
      if (!req.legal_identity) throw fail.invalid('missing_field', 'legal_identity is required', 'legal_identity');
      return { account: await present(identity, await identity.setLegalIdentity(req.account_id, fromLegalIdentityMessage(req.legal_identity))) };
    },
    setPlan: async (req) => {
      const a = await identity.setPlan(req.account_id, {
        active: req.active,
        features: req.set_features ? req.features : undefined,
        caps: req.caps,
        quotas: req.quotas,
      });
      return { account_id: a.id, subscription: a.subscription };
    },
    createApiKey: async (req) => {
      const kind = KIND_OF[req.credential_type];
      if (!kind) throw fail.invalid('invalid_kind', 'credential_type must be a personal access token or a workspace token', 'kind');
      const { token, key } = await identity.createApiKey({
        kind: kind === 'pat' ? 'pat' : req.livemode ? 'live' : 'test',
        userEmail: req.user_email,
        accountId: req.account_id,
        scopes: req.scopes,
      });
      return { token, key_id: `key_${key.id}` };
    },
    revokeApiKey: async (req) => ({ key_id: await identity.revokeApiKey(req.token) }),
    setLogo: async (req) => ({ account: await present(identity, await identity.setLogo(req.account_id, req.data)) }),
    bootstrap: async (req) => {
      const result = await identity.bootstrap(req.email, req.password);
      return { created: result.created, account_id: result.accountId ?? 0, token: result.token ?? '', email: result.created ? req.email : '' };
    },
  };
}
