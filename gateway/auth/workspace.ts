// Workspace resolution for /accounts/:account_id routes (spec §5, §7): token/workspace mismatch → 403,
// non-member → 404, no active subscription → 402, suspended workspace → 403 on mutations.
import { LRUCache } from 'lru-cache';
import { CredentialType, IdentityServiceService, Principal, Subscription } from '../../gen/invoicing/identity/v1/identity';
import { AsyncClient } from '../../services/shared/grpc/typed';
import { RemoteCallError } from '../../services/shared/grpc/errors';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { HttpError } from '../http/errors';
import { Tenant } from '../../services/shared/tenant';
import { LookupGuard } from './lookup-guard';

export interface AccountAccess {
  account_id: number;
  suspended: boolean;
  subscription: Subscription;
}

export interface ResolvedWorkspace {
  tenant: Tenant;
  access: AccountAccess;
}

const cacheKey = (userId: number, accountId: number) => `${accountId}:${userId}`;

export class WorkspaceAccess {
  private readonly cache: LRUCache<string, AccountAccess>;
  /** Keyed by account id (workspace events evict a whole account): no answer outlives the TTL or an eviction. */
  private readonly guard: LookupGuard;

  constructor(
    private readonly identity: AsyncClient<typeof IdentityServiceService>,
    ttlMs: number,
    private readonly upgradeUrl: (accountId: number) => string,
    now: () => number = Date.now,
  ) {
    this.cache = new LRUCache<string, AccountAccess>({ max: 50_000, ttl: ttlMs });
    this.guard = new LookupGuard(ttlMs, now);
  }

  private async lookup(userId: number, accountId: number, requestId: string): Promise<AccountAccess | null> {
    const lookup = this.guard.start();
    try {
      const res = await this.identity.getAccountAccess({ user_id: userId, account_id: accountId }, { requestId });
      const access: AccountAccess = {
        account_id: res.account_id,
        suspended: res.suspended,
        subscription: res.subscription ?? { active: false, features: [], caps: {}, quotas: {} },
      };
      const ttl = this.guard.finish(lookup, String(accountId));
      if (ttl > 0) this.cache.set(cacheKey(userId, accountId), access, { ttl });
      return access;
    } catch (err) {
      this.guard.abandon();
      if (err instanceof RemoteCallError && err.status === GrpcStatus.NOT_FOUND) return null;
      throw err;
    }
  }

  /** Resolves synchronously when the access is cached (the common case), else with one identity call. */
  resolve(principal: Principal, accountId: number, mutation: boolean, requestId: string): ResolvedWorkspace | Promise<ResolvedWorkspace> {
    const workspaceToken = principal.credential_type === CredentialType.CREDENTIAL_TYPE_WORKSPACE_TOKEN;
    if (workspaceToken && principal.account_id !== accountId) {
      throw new HttpError(403, 'account_mismatch', 'this workspace token belongs to another workspace');
    }
    const userId = workspaceToken ? 0 : principal.user_id;
    const cached = this.cache.get(cacheKey(userId, accountId));
    if (cached) return this.admit(principal, accountId, mutation, cached);
    return this.lookup(userId, accountId, requestId).then((access) => this.admit(principal, accountId, mutation, access));
  }

  private admit(principal: Principal, accountId: number, mutation: boolean, access: AccountAccess | null): ResolvedWorkspace {
    if (!access) throw new HttpError(404, 'resource_not_found', 'account not found');
    if (!access.subscription.active) {
      throw new HttpError(402, 'subscription_inactive', 'this workspace has no active subscription', {
        upgrade_url: this.upgradeUrl(accountId),
      });
    }
    if (access.suspended && mutation) throw new HttpError(403, 'workspace_suspended', 'this workspace is suspended; it is read-only');
    return { tenant: { account_id: accountId, livemode: principal.livemode }, access };
  }

  evictAccount(accountId: number): void {
    this.guard.evicted(String(accountId));
    const prefix = `${accountId}:`;
    for (const key of [...this.cache.keys()]) if (key.startsWith(prefix)) this.cache.delete(key);
  }
}
