// Resolves bearer credentials to principals with one identity call per credential per TTL, not per
// request. Malformed tokens are refused before any lookup; revocations arrive on the bus and evict.
import { LRUCache } from 'lru-cache';
import { IdentityServiceService, Principal } from '../../gen/invoicing/identity/v1/identity';
import { bearerToken, looksLikeJwt, parseApiToken } from '../../services/shared/credentials';
import { AsyncClient } from '../../services/shared/grpc/typed';
import { HttpError } from '../http/errors';

export class PrincipalCache {
  private readonly cache: LRUCache<string, Principal>;
  private readonly tokensOf = new Map<string, Set<string>>();

  constructor(private readonly identity: AsyncClient<typeof IdentityServiceService>, ttlMs: number) {
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
    const { principal } = await this.identity.authenticate({ credential: token }, { requestId });
    if (!principal) throw new HttpError(401, 'invalid_credentials', 'the credential is not valid');
    // A session is cached no longer than it lives.
    const ttl = principal.expires_at ? Math.max(0, Date.parse(principal.expires_at) - Date.now()) : undefined;
    this.cache.set(token, principal, ttl !== undefined ? { ttl: Math.min(ttl, this.cache.ttl) } : undefined);
    const tokens = this.tokensOf.get(principal.credential_id) ?? new Set<string>();
    tokens.add(token);
    this.tokensOf.set(principal.credential_id, tokens);
    return principal;
  }

  evictCredential(credentialId: string): void {
    for (const token of [...(this.tokensOf.get(credentialId) ?? [])]) this.cache.delete(token);
  }
}
