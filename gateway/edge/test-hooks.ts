// TEST-ONLY hooks of the edge policies, off by default: mounted only when EDGE_TEST_HOOKS=1 (refused
// with NODE_ENV=production). They let the black-box suite drive concurrency deterministically
// instead of by luck:
//
//   POST /api/v1/_test/edge/echo     an authenticated POST through the whole pipeline (rate limit,
//   POST /api/v1/_test/edge/scoped   auth, scope — `scoped` needs manage:invoices —, body reading,
//                                    idempotency). It answers 201 (or X-Test-Status) with a fresh
//                                    execution_id, a Location and an ETag. Request headers:
//                                      X-Test-Hold: <name>  wait on latch <name> before answering
//                                      X-Test-Status: <n>   answer status n (5xx → an error answer)
//                                      X-Test-Code: <code>  the error answer's code (e.g. concurrent_modification)
//   GET  /_test/edge/latches/<name>          {"waiting": n}: requests held on the latch
//   POST /_test/edge/latches/<name>/release  releases them: {"released": n}
//   GET  /_test/edge/stats                   {"executions": n, "pid": …}: echo executions so far
//   latch `gateway-listener-closed`          released by the gateway itself when a drain closes its
//                                            listener (a request in flight across the close)
//
// The control endpoints are outside /api/v1 (no auth, no rate limit) and per process: with several
// gateways a test asks the gateway it sent the held request to.
import { createHash, randomUUID } from 'node:crypto';
import express from 'express';
import { HttpError } from '../http/errors';
import { RouteSpec } from '../routes/route';
import { rawBodyOf } from './body';

export interface EdgeTestHooks {
  routes: RouteSpec[];
  control: express.Router;
  /** Releases the requests held on latch `name`; returns how many. */
  release(name: string): number;
}

/** The latch a drain releases when it closes the listener (gateway/http/lifecycle.ts). */
export const LISTENER_CLOSED_LATCH = 'gateway-listener-closed';

export function edgeTestHooks(): EdgeTestHooks {
  const latches = new Map<string, Array<() => void>>();
  let executions = 0;

  const echo: RouteSpec['handle'] = async (ctx) => {
    executions += 1;
    const executionId = randomUUID();
    const latch = ctx.req.header('x-test-hold');
    if (latch) {
      await new Promise<void>((resolve) => {
        const waiting = latches.get(latch) ?? [];
        waiting.push(resolve);
        latches.set(latch, waiting);
      });
    }
    const status = Number(ctx.req.header('x-test-status') ?? 201);
    if (!Number.isInteger(status) || status < 200 || status > 599) throw new HttpError(422, 'invalid_value', 'X-Test-Status must be an HTTP status');
    const code = ctx.req.header('x-test-code');
    if (status >= 400) throw new HttpError(status, code && /^[a-z_]{1,64}$/.test(code) ? code : 'test_failure', `test-induced ${status}`);
    const raw = rawBodyOf(ctx.req);
    return {
      status,
      headers: { Location: `/api/v1/_test/edge/things/${executionId}`, ETag: `"${executionId}"` },
      body: {
        execution_id: executionId,
        pid: process.pid,
        request_id: ctx.requestId,
        body_bytes: raw?.length ?? 0,
        body_sha256: raw ? createHash('sha256').update(raw).digest('hex') : null,
        json: ctx.body ?? null,
      },
    };
  };

  const routes: RouteSpec[] = [
    { method: 'post', path: '/_test/edge/echo', operationId: '_testEdgeEcho', handle: echo },
    { method: 'post', path: '/_test/edge/scoped', operationId: '_testEdgeScoped', scope: ['manage', 'invoices'], handle: echo },
  ];

  const control = express.Router();
  control.get('/latches/:name', (req, res) => {
    res.json({ waiting: latches.get(req.params.name)?.length ?? 0 });
  });
  const release = (name: string): number => {
    const waiting = latches.get(name) ?? [];
    latches.delete(name);
    for (const resume of waiting) resume();
    return waiting.length;
  };
  control.post('/latches/:name/release', (req, res) => {
    res.json({ released: release(req.params.name) });
  });
  control.get('/stats', (_req, res) => {
    res.json({ executions, pid: process.pid });
  });
  return { routes, control, release };
}
