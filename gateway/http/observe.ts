// Per-request observation at the edge: the request count and latency histogram by route template (never
// the raw path: ids would make a series per record), method and status; the access log line; and, with
// tracing on, the HTTP server span, child of an incoming W3C `traceparent`, in whose context the
// request's RPCs run. Handlers name what they know in res.locals (route template, credential id, account).
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Logger } from '../../services/shared/logger';
import { counter, histogram, labelSets, PREFIX, secondsSince } from '../../services/shared/observability/metrics';
import { currentTraceId, extractFrom, markError, runIn, SpanKind, startSpan } from '../../services/shared/observability/tracing';

const LABELS = ['method', 'route', 'status'] as const;
const labelsOf = labelSets(LABELS);
const metrics = () => ({
  requests: counter(`${PREFIX}http_requests_total`, 'HTTP requests answered by the gateway, by method, route template and status.', LABELS),
  seconds: histogram(`${PREFIX}http_request_duration_seconds`, 'Time from receiving an HTTP request to the end of its answer, by method, route template and status.', LABELS),
});

/** What a handler learns about its request, for the access log (res.locals.observed). */
export interface Observed {
  /** Route template, e.g. /api/v1/accounts/:account_id/invoices/:id. */
  route?: string;
  /** API key id or session id — never the token. */
  credentialId?: string;
  accountId?: number;
}

export const observedOf = (res: Response): Observed => (res.locals.observed ??= {}) as Observed;

/** Route templates of the gateway, to name a request refused before it was routed (429, 401 of the limiter). */
export class RouteTemplates {
  private readonly patterns: Array<{ method: string; template: string; re: RegExp }>;

  constructor(routes: Array<{ method: string; template: string }>) {
    this.patterns = routes.map(({ method, template }) => ({
      method: method.toUpperCase(),
      template,
      re: new RegExp(
        '^' +
          template
            .split('/')
            .map((part) => (part.startsWith(':') ? '[^/]+' : part.startsWith('*') ? '.*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
            .join('/') +
          '/?$',
        'i',
      ),
    }));
  }

  match(method: string, path: string): string | undefined {
    const verb = method === 'HEAD' ? 'GET' : method;
    return this.patterns.find((p) => p.method === verb && p.re.test(path))?.template;
  }
}

export function observeRequests(log: Logger, templates: RouteTemplates): RequestHandler {
  const m = metrics();
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    const span = startSpan(`${req.method} ${req.baseUrl}`, {
      kind: SpanKind.SERVER,
      parent: extractFrom(req.headers),
      attributes: { 'http.request.method': req.method },
    });
    const finish = () => {
      const observed = observedOf(res);
      const path = req.originalUrl.split('?')[0];
      const route = observed.route ?? appRoute(req) ?? templates.match(req.method, path) ?? 'unmatched';
      // An answer cut off before its end (client gone) has no status of its own.
      const status = res.writableFinished ? res.statusCode : 499;
      const seconds = secondsSince(started);
      const labels = labelsOf(req.method, route, String(status));
      m.requests.inc(labels);
      m.seconds.observe(labels, seconds);
      // The access line's fields are gathered only when it is printed (LOG_LEVEL info or finer).
      if (log.isLevelEnabled('info')) {
        runIn(span?.context, () =>
          log.info(
            {
              request_id: res.locals.requestId,
              method: req.method,
              route,
              path,
              status,
              duration_ms: Math.round(seconds * 1e6) / 1e3,
              credential_id: observed.credentialId ?? null,
              account_id: observed.accountId ?? null,
              ...(span ? { trace_id: currentTraceId() } : {}),
            },
            'request',
          ),
        );
      }
      if (span) {
        span.span.updateName(`${req.method} ${route}`);
        span.span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
        if (status >= 500) markError(span.span, String(status));
        span.span.end();
      }
    };
    // 'close' follows every answer, complete ('finish' came first: writableFinished) or cut off.
    res.once('close', finish);
    runIn(span?.context, next);
  };
}

/** The template of an app-level route (/healthz, /blobs/*key), when express matched one. */
function appRoute(req: Request): string | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? req.baseUrl + path : undefined;
}
