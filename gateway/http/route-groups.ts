// The API's routes as express routers grouped by their resource, so a request is matched against the
// few routes of its resource instead of all of them: express tries every route's pattern in turn, and
// with ~60 routes that walk cost a GET …/invoices/<id>/pdf about as much as the rest of its routing.
// A route's group is its first path segment and its third (the resource under /accounts/:account_id):
// `accounts|invoices`, `user|*` (a parameter or nothing there). A request is matched in the group of its
// own first and third segments (case-insensitively, as express routes), then in the `<first>|*` group;
// within a group the routes keep their order. Nothing else changes: each group is an express router with
// the same routes, parameters and 404 fall-through.
import express, { NextFunction, Request, RequestHandler, Response } from 'express';

type Method = 'get' | 'post' | 'patch' | 'delete';

const ANY = '*';

function groupOfTemplate(path: string): string {
  const [, first = '', , third] = path.split('/');
  return `${first.toLowerCase()}|${third === undefined || third.startsWith(':') || third.startsWith('*') ? ANY : third.toLowerCase()}`;
}

function groupsOfRequest(url: string): [string, string] {
  const end = url.indexOf('?');
  const [, first = '', , third = ''] = (end < 0 ? url : url.slice(0, end)).split('/', 4);
  const lead = first.toLowerCase();
  return [`${lead}|${third.toLowerCase()}`, `${lead}|${ANY}`];
}

export class RouteGroups {
  private readonly groups = new Map<string, express.Router>();

  /** A route: `handlers` run in turn, as express runs a route's handlers. */
  add(method: Method, path: string, ...handlers: RequestHandler[]): void {
    const key = groupOfTemplate(path);
    let router = this.groups.get(key);
    if (!router) this.groups.set(key, (router = express.Router()));
    router[method](path, ...handlers);
  }

  /** The middleware: the request's group, then its first segment's catch-all group, then next(). */
  handler(): RequestHandler {
    return (req: Request, res: Response, next: NextFunction) => {
      const [own, any] = groupsOfRequest(req.url);
      const specific = own === any ? undefined : this.groups.get(own);
      const fallback = this.groups.get(any);
      if (!specific) return fallback ? fallback(req, res, next) : next();
      // No error (undefined, or null from express's 'router' exit): no route of the group matched.
      specific(req, res, (err?: unknown) => (err != null || !fallback ? next(err) : fallback(req, res, next)));
    };
  }
}
