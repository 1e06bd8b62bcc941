// A route of the gateway's single HTTP → gRPC table: method, path, the OpenAPI operation it implements
// (its request body is validated against the document), the scopes it needs and the handler.
import type { Access, Resource } from '../../services/shared/credentials';
import { hasScope } from '../../services/shared/credentials';
import { RequestContext, RouteResult } from '../http/context';
import { GatewayClients } from '../clients';

export type Scope = [Access, Resource];

export interface RouteSpec {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Relative to /api/v1, in express syntax. Paths under /accounts/:account_id resolve the workspace. */
  path: string;
  operationId: string;
  /** False for sign-in, which is how a client gets a credential. */
  authenticated?: boolean;
  scope?: Scope;
  /** Further scopes the operation needs: a conversion that creates a document of another type needs
   * write on that type too (a quote's manager may not be an invoicer). */
  alsoRequires?: Scope[];
  /**
   * Body fields naming a record of another resource whose data the operation copies into what it
   * writes (a purchaser's address, an invoice's lines): given and not null, each needs read on that
   * resource — otherwise a write scope on one resource would read another.
   */
  reads?: Record<string, Resource>;
  handle(ctx: RequestContext, clients: GatewayClients): Promise<RouteResult>;
}

export const isAccountScoped = (route: RouteSpec) => route.path.startsWith('/accounts/:account_id');

/** The first scope of `needed` the credential lacks, as `access:resource`, else undefined. */
export function missingScope(granted: readonly string[], needed: readonly Scope[]): string | undefined {
  const lacking = needed.find(([access, resource]) => !hasScope(granted, access, resource));
  return lacking && `${lacking[0]}:${lacking[1]}`;
}

/** The scopes a route needs before anything else is read: its own and alsoRequires. */
export const routeScopes = (route: RouteSpec): Scope[] => [...(route.scope ? [route.scope] : []), ...(route.alsoRequires ?? [])];

/** The read scopes the body's references need (fields present and not null). */
export function bodyScopes(route: RouteSpec, body: unknown): Scope[] {
  if (!route.reads || typeof body !== 'object' || body === null) return [];
  const fields = body as Record<string, unknown>;
  return Object.entries(route.reads)
    .filter(([field]) => fields[field] !== undefined && fields[field] !== null)
    .map(([, resource]): Scope => ['read', resource]);
}
