// The current user and their workspaces (spec §4 "Workspaces of the current user").
// Workspace tokens act as their workspace: they see it alone, as its default; set_default, which
// changes a user's preference, needs a user credential (403 user_credential_required).
import { CredentialType } from '../../gen/invoicing/identity/v1/identity';
import { RequestContext } from '../http/context';
import { HttpError } from '../http/errors';
import { pathId } from '../http/ids';
import { presentAccount, presentCredential, presentUser } from './presenters';
import { RouteSpec } from './route';

const isWorkspaceToken = (ctx: RequestContext) => ctx.principal.credential_type === CredentialType.CREDENTIAL_TYPE_WORKSPACE_TOKEN;

export const userRoutes: RouteSpec[] = [
  {
    method: 'get',
    path: '/user',
    operationId: 'getCurrentUser',
    handle: async (ctx, { identity }) => {
      const user = isWorkspaceToken(ctx) ? null : (await identity.getUser({ user_id: ctx.principal.user_id }, { requestId: ctx.requestId })).user;
      return { status: 200, body: { user: user ? presentUser(user) : null, credential: presentCredential(ctx.principal) } };
    },
  },
  {
    method: 'get',
    path: '/user/accounts',
    operationId: 'listUserAccounts',
    scope: ['read', 'accounts'],
    handle: async (ctx, { identity }) => {
      if (isWorkspaceToken(ctx)) {
        const { account } = await identity.getAccount({ account_id: ctx.principal.account_id }, { requestId: ctx.requestId });
        return { status: 200, body: [presentAccount(account!)] };
      }
      // Not paginated over HTTP (typically 1-3 entries): the gateway walks the RPC's pages.
      const accounts = [];
      let page_token = '';
      do {
        const res = await identity.listUserAccounts(
          { user_id: ctx.principal.user_id, page: { page_size: 100, page_token } },
          { requestId: ctx.requestId },
        );
        accounts.push(...res.accounts.map(presentAccount));
        page_token = res.page_info?.next_page_token ?? '';
      } while (page_token);
      return { status: 200, body: accounts };
    },
  },
  {
    method: 'get',
    path: '/user/accounts/:account_id',
    operationId: 'getUserAccount',
    scope: ['read', 'accounts'],
    handle: async (ctx, { identity }) => {
      const accountId = pathId(ctx.params.account_id, 'account');
      if (isWorkspaceToken(ctx)) {
        if (accountId !== ctx.principal.account_id) throw new HttpError(404, 'resource_not_found', 'account not found');
        const { account } = await identity.getAccount({ account_id: accountId }, { requestId: ctx.requestId });
        return { status: 200, body: presentAccount(account!) };
      }
      const { account } = await identity.getUserAccount({ user_id: ctx.principal.user_id, account_id: accountId }, { requestId: ctx.requestId });
      return { status: 200, body: presentAccount(account!) };
    },
  },
  {
    method: 'patch',
    path: '/user/accounts/:account_id/set_default',
    operationId: 'setDefaultUserAccount',
    scope: ['write', 'accounts'],
    handle: async (ctx, { identity }) => {
      const accountId = pathId(ctx.params.account_id, 'account');
      if (isWorkspaceToken(ctx)) {
        throw new HttpError(403, 'user_credential_required', 'set_default changes a user preference; use a personal token or session');
      }
      const { account } = await identity.setDefaultAccount({ user_id: ctx.principal.user_id, account_id: accountId }, { requestId: ctx.requestId });
      return { status: 200, body: presentAccount(account!) };
    },
  },
];
