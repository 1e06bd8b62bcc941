// How the route table is mounted (docs/edge.md, "Rate limits by route class"): every route behind the
// rate-limit step of its declared class, in express's route groups and, for lean routes, in the lean
// lane; what matches no route charged once to the general class. One function for the gateway and for
// the unit test that sends every spelling of a route through the real matchers.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { LeanLane } from '../http/lean-lane';
import { RouteGroups } from '../http/route-groups';
import { RateClass, rateClassOf, RouteSpec } from './route';

export interface MountedRoute {
  route: RouteSpec;
  /** The route's handler (its last step). */
  handle: RequestHandler;
}

export interface MountOptions {
  /** The rate-limit step of a class (made once per route). */
  charge(rateClass: RateClass): RequestHandler;
  /** Lean routes are also taken by this lane, under `mount`, after `laneSteps` (connection policy, request id, observation). */
  lane: LeanLane;
  mount: string;
  laneSteps: RequestHandler[];
}

/** Registers `routes`; returns the middleware to mount at `options.mount` in express. */
export function mountRoutes(routes: MountedRoute[], options: MountOptions): RequestHandler[] {
  const router = new RouteGroups();
  for (const { route, handle } of routes) {
    const charge = options.charge(rateClassOf(route));
    router.add(route.method, route.path, charge, handle);
    if (route.lean) options.lane.get(options.mount, route.path, [...options.laneSteps, charge, handle]);
  }
  // No request runs two routes, so each is charged once. What matches no route is charged `general`:
  // OPTIONS before routing (express's router answers it itself, Allow, without a route), anything
  // else once no route took it (the 404 that follows).
  const unrouted = options.charge('general');
  return [
    (req: Request, res: Response, next: NextFunction) => (req.method === 'OPTIONS' ? unrouted(req, res, next) : next()),
    router.handler(),
    (req: Request, res: Response, next: NextFunction) => (req.method === 'OPTIONS' ? next() : unrouted(req, res, next)),
  ];
}
