// Resolves bearer credentials to principals with one identity call per credential per TTL, not per
// request. Malformed tokens are refused before any lookup; revocations arrive on the bus and evict.
// A cached principal is never older than the TTL, nor kept past its session's expiry, nor re-cached by
// a lookup that a revocation overtook (LookupGuard): the TTL bounds revocation even without the bus.
import { LRUCache } from 'lru-cache';
import { IdentityServiceService, Principal } from '../../gen/invoicing/identity/v1/identity';
import { bearerToken, looksLikeJwt, parseApiToken } from '../../services/shared/credentials';
import { AsyncClient } from '../../services/shared/grpc/typed';
import { HttpError } from '../http/errors';
import { LookupGuard } from './lookup-guard';

export class PrincipalCache {
  private readonly cache: LRUCache<string, Principal>;
  private readonly tokensOf = new Map<string, Set<string>>();
  private readonly guard: LookupGuard;

  constructor(
    private readonly identity: AsyncClient<typeof IdentityServiceService>,
    ttlMs: number,
    now: () => number = Date.now,
  ) {
    this.guard = new LookupGuard(ttlMs, now);
    this.cache = new LRUCache<string, Principal>({
      max: 50_000,
      ttl: ttlMs,
      dispose: (principal, token) => {
        const tokens = this.tokensOf.get(principal.credential_id);
        tokens?.delete(token);
        if (tokens?.size === 0) this.tokensOf.delete(principal.credential_id);
      },
    });
  }

  /** The principal of a cached credential, without waiting: the common case costs no promise. */
  cached(authorization: string | undefined): Principal | undefined {
    const token = bearerToken(authorization);
    // Only well-formed credentials are ever cached, so a hit needs no format check.
    return token === undefined ? undefined : this.cache.get(token);
  }

  async resolve(authorization: string | undefined, requestId: string): Promise<Principal> {
    if (!authorization) throw new HttpError(401, 'missing_credentials', 'an Authorization: Bearer credential is required');
    const cached = this.cached(authorization);
    if (cached) return cached;
    const token = bearerToken(authorization);
    if (!token || (!parseApiToken(token) && !looksLikeJwt(token))) {
      throw new HttpError(401, 'invalid_credentials', 'the credential is malformed');
    }
    const lookup = this.guard.start();
    let principal: Principal | undefined;
    try {
      principal = (await this.identity.authenticate({ credential: token }, { requestId })).principal;
    } catch (err) {
      this.guard.abandon();
      throw err;
    }
    if (!principal) {
      this.guard.abandon();
      throw new HttpError(401, 'invalid_credentials', 'the credential is not valid');
    }
    // A session is cached no longer than it lives; one that ends now is not cached at all.
    const ttl = this.guard.finish(lookup, principal.credential_id, principal.expires_at ? Date.parse(principal.expires_at) : undefined);
    if (ttl > 0) this.remember(token, principal, ttl);
    return principal;
  }

  private remember(token: string, principal: Principal, ttl: number): void {
    this.cache.set(token, principal, { ttl });
    const tokens = this.tokensOf.get(principal.credential_id) ?? new Set<string>();
    tokens.add(token);
    this.tokensOf.set(principal.credential_id, tokens);
  }

  evictCredential(credentialId: string): void {
    this.guard.evicted(credentialId);
    for (const token of [...(this.tokensOf.get(credentialId) ?? [])]) this.cache.delete(token);
  }
}
