// A route of the gateway's single HTTP → gRPC table: method, path, the OpenAPI operation it implements
// (its request body is validated against the document), the scope it needs and the handler.
import type { Access, Resource } from '../../services/shared/credentials';
import { RequestContext, RouteResult } from '../http/context';
import { GatewayClients } from '../clients';

export interface RouteSpec {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Relative to /api/v1, in express syntax. Paths under /accounts/:account_id resolve the workspace. */
  path: string;
  operationId: string;
  /** False for sign-in, which is how a client gets a credential. */
  authenticated?: boolean;
  scope?: [Access, Resource];
  handle(ctx: RequestContext, clients: GatewayClients): Promise<RouteResult>;
}

export const isAccountScoped = (route: RouteSpec) => route.path.startsWith('/accounts/:account_id');
