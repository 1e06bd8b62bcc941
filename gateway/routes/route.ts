// A route of the gateway's single HTTP → gRPC table: method, path, the OpenAPI operation it implements
// (its request body is validated against the document), the scopes it needs and the handler.
import type { Access, Resource } from '../../services/shared/credentials';
import { hasScope } from '../../services/shared/credentials';
import { RequestContext, RouteResult } from '../http/context';
import type { UploadScreen } from '../http/upload';
import { GatewayClients } from '../clients';

export type Scope = [Access, Resource];

/**
 * The rate-limit budget a route's requests are charged to (docs/edge.md, "Rate limits"), chosen from
 * the matched route — never from the URL's text, which has many spellings for one route:
 * `general` (the default) per credential; `pdf` the separate PDF budget per credential; `sign_in`
 * always the client address, whatever credential the request carries.
 */
export type RateClass = 'general' | 'pdf' | 'sign_in';

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
  /**
   * Body fields that create or change a record of another resource (an expense's inline supplier
   * creates a contact): given and not null, each needs write on that resource. Keys of `reads` and
   * `writes` are field paths (`expense.supplier_id` is the field of the body's `expense` object).
   */
  writes?: Record<string, Resource>;
  /**
   * The resource has a multipart upload endpoint of its own: a multipart body sent to this JSON
   * operation is a misplaced file — 422 file_not_accepted instead of 415 (spec §4 Expenses).
   */
  refusesFiles?: boolean;
  /**
   * A multipart file upload (gateway/http/upload.ts): the body is not read as JSON but received as a
   * stream, its file spooled; the handler finds it in ctx.upload. The rule's checks run before the
   * body is read in full, so a refused upload is answered without receiving it (docs/edge.md "Uploads").
   */
  upload?: UploadRule;
  /**
   * A GET that the gateway also dispatches through its lean lane (gateway/http/lean-lane.ts): the same
   * steps without express's routing. For the hottest reads only (PDF downloads and their 304s).
   */
  lean?: boolean;
  /** The budget its requests are charged to; default `general`. */
  rateClass?: RateClass;
  handle(ctx: RequestContext, clients: GatewayClients): Promise<RouteResult>;
}

export interface UploadRule {
  /** Checked before any of the body is read (the plan feature: 402). Throws the refusal. */
  admit?(ctx: RequestContext): void;
  /** Checked on the file's first bytes, before the rest is read (its type: 422). Throws the refusal. */
  screen?: UploadScreen;
}

export const rateClassOf = (route: RouteSpec): RateClass => route.rateClass ?? 'general';

export const isAccountScoped = (route: RouteSpec) => route.path.startsWith('/accounts/:account_id');

/** The first scope of `needed` the credential lacks, as `access:resource`, else undefined. */
export function missingScope(granted: readonly string[], needed: readonly Scope[]): string | undefined {
  const lacking = needed.find(([access, resource]) => !hasScope(granted, access, resource));
  return lacking && `${lacking[0]}:${lacking[1]}`;
}

/** The scopes a route needs before anything else is read: its own and alsoRequires. */
export const routeScopes = (route: RouteSpec): Scope[] => [...(route.scope ? [route.scope] : []), ...(route.alsoRequires ?? [])];

/** The value at a dotted path of a parsed body, undefined where a step is missing or not an object. */
function fieldAt(body: unknown, path: string): unknown {
  let value: unknown = body;
  for (const step of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}

/** The scopes the body's references need: read for `reads`, write for `writes` (fields present and not null). */
export function bodyScopes(route: RouteSpec, body: unknown): Scope[] {
  if (typeof body !== 'object' || body === null) return [];
  const given = (field: string) => fieldAt(body, field) !== undefined && fieldAt(body, field) !== null;
  const scoped = (fields: Record<string, Resource> | undefined, access: Access): Scope[] =>
    Object.entries(fields ?? {})
      .filter(([field]) => given(field))
      .map(([, resource]): Scope => [access, resource]);
  return [...scoped(route.reads, 'read'), ...scoped(route.writes, 'write')];
}
