// The gateway's own health and its graceful stop (docs/edge.md "Readiness and drain").
//
// /healthz is liveness: the event loop answers. /readyz is readiness of this gateway alone — it
// listens, is not draining, and its edge state (Redis or SQLite) answers — never of the services
// behind it: a slow or dead backend answers 503 on the requests that need it, it does not take every
// gateway replica out of the load balancer at once.
//
// drain(): /readyz fails at once; requests keep being served (each answer closes its connection, so
// clients move to another replica) for `drainMs` while the load balancer notices; then the listener
// closes and in-flight requests get up to `timeoutMs` to finish before their connections are cut.
import { NextFunction, Request, Response } from 'express';
import http from 'node:http';
import { readEnv } from '../../services/shared/config';
import { EdgeState } from '../edge/ports/edge-state';

/** How long /readyz waits for the edge state before calling this gateway not ready. */
const EDGE_PING_TIMEOUT_MS = 1_000;

export interface DrainOptions {
  /** Time between failing readiness and closing the listener (SHUTDOWN_DRAIN_MS). */
  drainMs: number;
  /** Bound on the wait for in-flight requests once the listener is closed (SHUTDOWN_TIMEOUT_MS). */
  timeoutMs: number;
}

/** SHUTDOWN_DRAIN_MS (default 0) and SHUTDOWN_TIMEOUT_MS (default 10 s). */
export function readDrainOptions(env: NodeJS.ProcessEnv = process.env): DrainOptions {
  const { int } = readEnv(env);
  return { drainMs: int('SHUTDOWN_DRAIN_MS', 0), timeoutMs: int('SHUTDOWN_TIMEOUT_MS', 10_000) };
}

export class GatewayLifecycle {
  private draining = false;

  constructor(
    private readonly edge: EdgeState,
    /** Called once the listener is closed (test hooks release the latch held requests wait on). */
    private readonly onListenerClosed: () => void = () => undefined,
  ) {}

  /** While draining, every answer closes its connection. */
  readonly connectionPolicy = (_req: Request, res: Response, next: NextFunction): void => {
    if (this.draining) res.setHeader('Connection', 'close');
    next();
  };

  readonly healthz = (_req: Request, res: Response): void => {
    res.json({ status: 'ok' });
  };

  readiness(server: () => http.Server | undefined) {
    return async (_req: Request, res: Response): Promise<void> => {
      const reason = this.draining ? 'draining' : !server()?.listening ? 'not_listening' : await this.edgeProblem();
      res.status(reason ? 503 : 200).json(reason ? { status: 'not_ready', reason } : { status: 'ready' });
    };
  }

  private async edgeProblem(): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve('edge_state_unreachable'), EDGE_PING_TIMEOUT_MS);
    });
    const ping = this.edge.ping().then(
      () => undefined,
      () => 'edge_state_unreachable',
    );
    try {
      return await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async drain(server: http.Server | undefined, options: DrainOptions): Promise<void> {
    this.draining = true;
    if (!server) return;
    if (options.drainMs > 0) await new Promise((resolve) => setTimeout(resolve, options.drainMs));
    // Resolves once every connection has ended: idle ones now, busy ones after their answer.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    this.onListenerClosed();
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, options.timeoutMs);
    });
    await Promise.race([closed, bounded]);
    clearTimeout(timer);
    server.closeAllConnections();
  }
}
