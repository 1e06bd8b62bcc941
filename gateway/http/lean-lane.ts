// The lean lane: the gateway's hottest GETs (RouteSpec.lean — the PDF downloads and their 304
// revalidations) are matched here, before express, and run through the very same steps express would
// run them through: the connection policy, the request id, the observation, the rate limiter and the
// route's handler, in that order, errors answered by the same error writer. Only express's own
// per-request work is left out: re-prototyping req and res, walking the app's layers and the mount,
// the route-group lookup and the router's parameter processing — on a 304 that was more than the rest
// of the request (docs/rendering.md, "The 304 path, profiled").
//
// What express gave those steps, the lane gives too: res.locals, req.params (percent-decoded),
// req.query (the 'simple' parser: node's querystring), req.baseUrl/originalUrl, and req.url below
// the /api/v1 mount. Matching follows express's routing: case-insensitive, an optional trailing slash,
// a query string allowed. Anything else — another method (HEAD included), a parameter that is not
// valid percent-encoding (express answers 400), an absolute-form request target — is left to express,
// where the same routes are registered as well. The gateway hands both the same normalised target
// (gateway/http/request-target.ts: no fragment, unreserved characters decoded, origin form), and the
// steps include the route's rate-limit step for its declared class (RouteSpec.rateClass): the budget
// is known from the match, whichever of the two takes the request.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';

interface LeanRoute {
  pattern: RegExp;
  names: string[];
  mount: string;
  steps: RequestHandler[];
}

const escape = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `/accounts/:account_id/invoices/:id/pdf` below `mount` → a case-insensitive pattern and its parameter names. */
export function compileTemplate(mount: string, path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path
    .split('/')
    .map((part) => {
      if (!part.startsWith(':')) return escape(part);
      names.push(part.slice(1));
      return '([^/?#]+)';
    })
    .join('/');
  return { pattern: new RegExp(`^${escape(mount)}${source}/?(?:\\?|$)`, 'i'), names };
}

export class LeanLane {
  private readonly routes: LeanRoute[] = [];

  /** `onError`: how an error a step passes on is answered (the app's error writer). */
  constructor(private readonly onError: (err: unknown, req: Request, res: Response) => void) {}

  /** A GET route below `mount`, run through `steps` (the last one answers). */
  get(mount: string, path: string, steps: RequestHandler[]): void {
    this.routes.push({ ...compileTemplate(mount, path), mount, steps });
  }

  /** Takes the request when it is a GET of a lean route; false: express serves it. */
  dispatch(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' || this.routes.length === 0) return false;
    const url = req.url ?? '';
    for (const route of this.routes) {
      const match = route.pattern.exec(url);
      if (!match) continue;
      const params = decodeParams(route.names, match);
      if (!params) return false;
      this.run(route, prepare(req, res, route.mount, url, params), res as Response);
      return true;
    }
    return false;
  }

  private run(route: LeanRoute, req: Request, res: Response): void {
    let index = 0;
    const next: NextFunction = (err?: unknown) => {
      if (err != null) return this.onError(err, req, res);
      const step = route.steps[index++];
      // The last step answers; one that passes the request on anyway is a gateway bug, answered as one.
      if (!step) return this.onError(new Error('no lean step answered the request'), req, res);
      try {
        const pending = step(req, res, next) as unknown;
        if (pending instanceof Promise) pending.catch(next);
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  }
}

/** Percent-decoded parameters, as express's router gives them; undefined when one is not valid encoding. */
function decodeParams(names: string[], match: RegExpExecArray): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    const raw = match[i + 1];
    try {
      params[names[i]] = raw.includes('%') ? decodeURIComponent(raw) : raw;
    } catch {
      return undefined;
    }
  }
  return params;
}

/** What express's app and router would have set on the request before the route's steps ran. */
function prepare(incoming: IncomingMessage, res: ServerResponse, mount: string, url: string, params: Record<string, string>): Request {
  const req = incoming as Request;
  const queryAt = url.indexOf('?');
  (res as Response).locals = Object.create(null) as Response['locals'];
  req.originalUrl = url;
  req.baseUrl = mount;
  req.url = url.slice(mount.length);
  req.params = params;
  // express 5 defines req.query as a getter on its own prototype, which a plain request does not have.
  req.query = queryAt < 0 ? {} : querystring.parse(url.slice(queryAt + 1));
  return req;
}
