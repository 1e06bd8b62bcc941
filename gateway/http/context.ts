// What a route handler gets: the authenticated principal, the resolved tenant and the parsed request.
import type { Request } from 'express';
import { Principal } from '../../gen/invoicing/identity/v1/identity';
import { SignInThrottle } from '../auth/sign-in-throttle';
import { AccountAccess } from '../auth/workspace';
import type { ReceivedUpload } from './upload';

import { Tenant } from '../../services/shared/tenant';

export type { Tenant };

export interface RequestContext {
  requestId: string;
  principal: Principal;
  /** Set on /accounts/:account_id routes after workspace resolution. */
  tenant?: Tenant;
  access?: AccountAccess;
  params: Record<string, string>;
  query: Request['query'];
  body: unknown;
  req: Request;
  /** The received file of an upload route (RouteSpec.upload). */
  upload?: ReceivedUpload;
  /** Sign-in attempts per e-mail address (used by POST /auth/sign_in). */
  signIns: SignInThrottle;
  /**
   * Drops a credential from this gateway's principal cache (POST /auth/sign_out): the gateway that
   * carries a revocation refuses the credential from its answer on; other replicas follow by the
   * identity event (docs/edge.md, "Sign-out takes effect at once").
   */
  forgetCredential(credentialId: string): void;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  /** A body written as it is read (a file download; GET only, never kept under an idempotency key). */
  stream?: AsyncIterable<Buffer>;
  headers?: Record<string, string>;
}
