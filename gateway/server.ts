// The edge gateway: express app, authentication, scopes, workspace resolution, request validation
// against the OpenAPI document, and forwarding to gRPC services through the route table.
import express, { NextFunction, Request, Response } from 'express';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { EventBus, TOPICS } from '../services/shared/bus/port';
import { fromMessage } from '../services/shared/events';
import { RemoteCallError } from '../services/shared/grpc/errors';
import { Logger } from '../services/shared/logger';
import { PrincipalCache } from './auth/principals';
import { SignInThrottle } from './auth/sign-in-throttle';
import { WorkspaceAccess } from './auth/workspace';
import { GatewayClients, withCallOptions } from './clients';
import { RequestContext, RouteResult } from './http/context';
import { FsBlobStore } from '../services/shared/blobs/fs';
import { serveSignedBlobs } from './http/blobs';
import { HttpError, httpErrorFromRemote } from './http/errors';
import { pathId } from './http/ids';
import { DrainOptions, GatewayLifecycle } from './http/lifecycle';
import { observedOf, observeRequests, RouteTemplates } from './http/observe';
import { LeanLane } from './http/lean-lane';
import { closeLingering } from './http/linger';
import { normalizeTarget } from './http/request-target';
import { closingConnection, receiveUpload } from './http/upload';
import { readUploadOptions, UploadOptions, UploadSpool } from './http/spool';
import type { Principal } from '../gen/invoicing/identity/v1/identity';
import { describeAjvError, openApiPath, OpenApiValidator, RequestBodyRule, servedOpenApi } from './openapi/document';
import { docsRoutes } from './openapi/docs-page';
import { hasBody, isMultipart, readBody, rawBodyOf } from './edge/body';
import { EdgeConfig } from './edge/config';
import { requestFingerprint } from './edge/fingerprint';
import { Answer, headerName, IdempotencyGuard, idempotencyKeyOf, RETRYABLE_CODES, scopedKey } from './edge/idempotency';
import { EdgeState } from './edge/ports/edge-state';
import { rateLimiter } from './edge/rate-limit';
import { edgeTestHooks, LISTENER_CLOSED_LATCH } from './edge/test-hooks';
import { allRoutes } from './routes';
import { mountRoutes } from './routes/mount';
import { bodyScopes, isAccountScoped, missingScope, routeScopes, RouteSpec } from './routes/route';

export interface GatewayOptions {
  clients: GatewayClients;
  bus: EventBus;
  log: Logger;
  /** Principal and workspace-access cache lifetime; revocations evict earlier through the bus. */
  cacheTtlMs?: number;
  upgradeUrl?: string;
  instanceId?: string;
  /** Embedded mode: serve signed blob URLs (logos, files) from this store at /blobs/. */
  signedBlobs?: FsBlobStore;
  /** Edge policies (rate limits, idempotency keys) and the state they share across replicas. */
  edge: { state: EdgeState; config: EdgeConfig };
  /** Where uploads are spooled and how long their bodies may take (default: from the environment). */
  uploads?: UploadOptions;
}

export interface Gateway {
  app: express.Express;
  listen(port: number, host?: string): Promise<http.Server>;
  /** Graceful stop (SIGTERM): readiness fails, requests are served for drainMs, then in-flight ones finish (bounded). */
  drain(options: DrainOptions): Promise<void>;
  close(): Promise<void>;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{8,128}$/;

/** `req_` + 32 hex digits: a random per-process half and a counter, unique across replicas and restarts
 * without drawing randomness per request. */
const REQUEST_ID_PREFIX = `req_${randomBytes(8).toString('hex')}`;
let requestCounter = 0;
const nextRequestId = () => REQUEST_ID_PREFIX + (requestCounter++).toString(16).padStart(16, '0');

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { clients, log } = options;
  const ttl = options.cacheTtlMs ?? 60_000;
  const upgradeBase = options.upgradeUrl ?? 'https://invoicing.example.com/settings/billing';
  const upgradeUrl = (accountId: number) => `${upgradeBase}?account_id=${accountId}`;
  const principals = new PrincipalCache(clients.identity, ttl);
  const workspaces = new WorkspaceAccess(clients.identity, ttl, upgradeUrl);
  const signIns = new SignInThrottle(options.edge.state, options.edge.config.signIn, log);
  const openapi = new OpenApiValidator(servedOpenApi());
  const idempotency = new IdempotencyGuard(options.edge.state, options.edge.config.idempotency, log);
  const testHooks = options.edge.config.testHooks ? edgeTestHooks() : undefined;
  const lifecycle = new GatewayLifecycle(options.edge.state, () => testHooks?.release(LISTENER_CLOSED_LATCH));
  const uploads = options.uploads ?? readUploadOptions();
  const { spool, removed } = await UploadSpool.open(uploads.spoolDir);
  if (removed > 0) log.info({ spool_dir: uploads.spoolDir, removed }, 'removed spool files left by a crashed process');

  // Every gateway replica sees every identity event (a consumer group of its own).
  const subscription = await options.bus.subscribe(
    TOPICS.identity,
    { group: `gateway-${options.instanceId ?? randomUUID()}` },
    async (message) => {
      const event = fromMessage(message);
      if (event.credential_revoked) principals.evictCredential(event.credential_revoked.credential_id);
      if (event.workspace_changed) workspaces.evictAccount(event.workspace_changed.account_id);
    },
  );

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(lifecycle.connectionPolicy);

  const assignRequestId = (req: Request, res: Response, next: NextFunction) => {
    // The raw header (node lower-cases names): express's req.header() adds a Referer check per call.
    const inbound = req.headers['x-request-id'];
    const requestId = typeof inbound === 'string' && REQUEST_ID_RE.test(inbound) ? inbound : nextRequestId();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    next();
  };
  app.use(assignRequestId);
  // Metrics, access log and the server span of every request (gateway/http/observe.ts).
  const templates = new RouteTemplates(
    [...allRoutes, ...(testHooks?.routes ?? [])].map((route) => ({ method: route.method, template: `/api/v1${route.path}` })),
  );
  const observe = observeRequests(log, templates);
  app.use(observe);

  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(openapi.doc);
  });
  const readers = new Map(allRoutes.filter((route) => route.method === 'get').map((route) => [route.path, route]));
  const limiter = rateLimiter(options.edge.state, options.edge.config.rateLimit, log, principals);
  // Every request is charged exactly once, to the budget of the route it matched (RouteSpec.rateClass):
  // the limiter is the first step of each route (gateway/routes/mount.ts). The hottest GETs also take the
  // lean lane (gateway/http/lean-lane.ts): the same steps, in the same order, without express's routing.
  // They stay registered with express for what the lane leaves to it.
  const lane = new LeanLane(answerError);
  const mounted = allRoutes.map((route) => ({ route, handle: handler(route) }));
  if (testHooks) {
    mounted.push(...testHooks.routes.map((route) => ({ route, handle: handler(route, { documented: false }) })));
    app.use('/_test/edge', testHooks.control);
  }
  const laneSteps = [lifecycle.connectionPolicy, assignRequestId, observe];
  app.use('/api/v1', ...mountRoutes(mounted, { charge: limiter.forClass, lane, mount: '/api/v1', laneSteps }));
  // Everything else after the API, which carries nearly all of the traffic.
  if (options.signedBlobs) {
    const serve = serveSignedBlobs(options.signedBlobs);
    app.get('/blobs/*key', (req, res, next) => {
      serve(req, res).catch(next);
    });
  }
  app.get('/healthz', lifecycle.healthz);
  app.get('/readyz', lifecycle.readiness(() => server));
  app.use(docsRoutes());

  app.use((_req: Request, _res: Response, next: NextFunction) => {
    next(new HttpError(404, 'route_not_found', 'no such endpoint'));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => answerError(err, req, res));

  /** The one error writer of the app and of the lean lane. */
  function answerError(err: unknown, req: Request, res: Response): void {
    const answer = toHttpError(err, res.locals.requestId as string);
    if (answer.headers.connection === 'close') closeLingering(req);
    sendError(res, answer);
  }

  function toHttpError(err: unknown, requestId: string): HttpError {
    if (err instanceof HttpError) return err;
    if (err instanceof RemoteCallError) return httpErrorFromRemote(err, upgradeBase);
    // express's own refusals (e.g. a path parameter that is not valid percent-encoding) carry a 4xx status.
    const expressError = err as { status?: number };
    if (expressError.status && expressError.status >= 400 && expressError.status < 500) {
      return new HttpError(expressError.status, 'bad_request', 'the request could not be read');
    }
    log.error({ err, request_id: requestId }, 'unhandled error');
    return new HttpError(500, 'internal_error', 'internal error');
  }

  function errorBody(err: HttpError, requestId: string) {
    if (err.status === 402 && !err.extra.upgrade_url) err.extra.upgrade_url = upgradeBase;
    return { error: { code: err.code, message: err.message, request_id: requestId, ...err.extra } };
  }

  function sendError(res: Response, err: HttpError): void {
    writeAnswer(res, errorAnswerOf(err, res.locals.requestId as string));
  }

  const JSON_TYPE = 'application/json; charset=utf-8';

  /** A handler's result or error as a complete answer (what an idempotency key keeps and replays). */
  function answerOf(result: RouteResult): Answer {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = value;
    if (result.body === undefined) return { status: result.status, headers };
    if (Buffer.isBuffer(result.body)) return { status: result.status, headers, body: result.body };
    headers['content-type'] ??= JSON_TYPE;
    return { status: result.status, headers, body: Buffer.from(JSON.stringify(result.body)) };
  }

  function errorAnswerOf(httpError: HttpError, requestId: string): Answer {
    return {
      status: httpError.status,
      headers: { ...httpError.headers, 'content-type': JSON_TYPE },
      body: Buffer.from(JSON.stringify(errorBody(httpError, requestId))),
      retryable: httpError.status === 409 && RETRYABLE_CODES.has(httpError.code),
    };
  }

  function errorAnswer(err: unknown, requestId: string): Answer {
    return errorAnswerOf(toHttpError(err, requestId), requestId);
  }

  /** Writes an answer straight to node:http: express's res.json/send add nothing the API needs (no
   * ETag, no charset negotiation) and cost a good part of a request. */
  function writeAnswer(res: Response, answer: Answer): void {
    for (const name in answer.headers) res.setHeader(headerName(name), answer.headers[name]);
    res.statusCode = answer.status;
    res.end(answer.body);
  }

  /** A streamed body: headers first, then the chunks with backpressure; a failure mid-body cuts the
   * connection (the client sees a short body against Content-Length, never a wrong file). */
  async function streamAnswer(res: Response, result: RouteResult, stream: AsyncIterable<Buffer>): Promise<void> {
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(headerName(name), value);
    res.statusCode = result.status;
    try {
      for await (const chunk of stream) {
        if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
      }
      res.end();
    } catch (err) {
      log.warn({ err: String(err), request_id: res.locals.requestId }, 'streamed answer failed');
      res.destroy();
    }
  }

  function handler(route: RouteSpec, { documented = true } = {}) {
    const apiPath = openApiPath(route.path);
    // Documented POSTs and PATCHes take JSON only (gateway/edge/body.ts); GET and DELETE bodies are not read.
    const bodyRule =
      documented && !route.upload && (route.method === 'post' || route.method === 'patch') ? openapi.requestBody(route.method, apiPath) : undefined;
    // A PATCH naming no field changes nothing: it answers what GET answers, and writes nothing (no updated_at bump).
    const reader = route.method === 'patch' && bodyRule?.declared ? readers.get(route.path) : undefined;
    const scopes = routeScopes(route);
    if (documented && !openapi.operation(route.method, apiPath)) throw new Error(`route ${route.method} ${route.path} is missing from the OpenAPI document`);
    const mutation = route.method !== 'get';
    // Every POST honours Idempotency-Key (spec §4); GET, PATCH and DELETE ignore the header.
    const idempotent = route.method === 'post';
    const template = `/api/v1${route.path}`;
    return async (req: Request, res: Response, next: NextFunction) => {
      const observed = observedOf(res);
      observed.route = template;
      try {
        const requestId = res.locals.requestId as string;
        // Cached principals and workspace access are used without awaiting: most requests never wait.
        const authorization = req.headers.authorization;
        const principal =
          route.authenticated === false ? undefined : (principals.cached(authorization) ?? (await principals.resolve(authorization, requestId)));
        if (principal) {
          observed.credentialId = principal.credential_id;
          if (principal.account_id) observed.accountId = principal.account_id;
          requireScopes(principal.scopes, scopes);
        }
        const idempotencyKey = idempotent ? idempotencyKeyOf(req) : undefined;
        const ctx: RequestContext = {
          requestId,
          principal: principal!,
          params: req.params as Record<string, string>,
          // express parses the query string on every read of req.query: only for routes that use it.
          get query() {
            return req.query;
          },
          body: undefined,
          req,
          signIns,
          forgetCredential: (credentialId) => principals.evictCredential(credentialId),
        };
        if (principal && isAccountScoped(route)) {
          const pending = workspaces.resolve(principal, pathId(String(req.params.account_id), 'account'), mutation, requestId);
          const resolved = pending instanceof Promise ? await pending : pending;
          ctx.tenant = resolved.tenant;
          ctx.access = resolved.access;
          observed.accountId = resolved.tenant.account_id;
        }
        if (route.refusesFiles && isMultipart(req)) {
          req.resume(); // the file is not read: drain it so the answer can be written on this connection
          throw new HttpError(422, 'file_not_accepted', 'this endpoint takes JSON only; upload files with POST …/expenses/upload', { field: 'body' });
        }
        if (route.upload) {
          await runUpload(route, req, res, ctx, principal!, idempotencyKey);
          return;
        }
        // Bodies are read (once, raw bytes kept for the idempotency fingerprint) after authentication,
        // so an anonymous caller learns nothing but 401.
        const parsed = hasBody(req) && (bodyRule || !documented) ? await readBody(req, { jsonOnly: documented }) : undefined;
        ctx.body = bodyRule ? checkedBody(bodyRule, parsed) : parsed;
        if (principal) requireScopes(principal.scopes, bodyScopes(route, ctx.body));
        if (reader && Object.keys(ctx.body as object).length === 0) {
          writeAnswer(res, answerOf(await unchanged(reader, ctx)));
          return;
        }
        if (idempotencyKey !== undefined && principal) {
          // Only the handler runs under the key: whatever was refused above kept nothing.
          const fingerprint = requestFingerprint(req.method, req.originalUrl, req.headers['content-type'], rawBodyOf(req));
          // The services get the key too and record it with their write: a retry after a crash
          // between their commit and the edge's answers the first result (services/shared/idempotency.ts).
          const keyed = withCallOptions(clients, { idempotency: { key: scopedKey(principal.credential_id, idempotencyKey), fingerprint } });
          const answer = await idempotency.run({ credentialId: principal.credential_id, key: idempotencyKey, fingerprint, requestId }, () =>
            route.handle(ctx, keyed).then(answerOf, (err: unknown) => errorAnswer(err, requestId)),
          );
          writeAnswer(res, answer);
          return;
        }
        const result = await route.handle(ctx, clients);
        if (result.stream) await streamAnswer(res, result, result.stream);
        else writeAnswer(res, answerOf(result));
      } catch (err) {
        // An upload refused before its body was read whole (401, 403, 402, 422 …): the rest is never read.
        next(route.upload && !req.complete ? closingConnection(toHttpError(err, res.locals.requestId as string)) : err);
      }
    };
  }

  /** An upload route: admitted before any of the body is read (the plan feature), the file received
   * (screened on its first bytes, spooled) next, then the handler runs — under the Idempotency-Key when
   * one was sent, with the fingerprint of the streamed form. The spool is deleted however the request ends. */
  async function runUpload(route: RouteSpec, req: Request, res: Response, ctx: RequestContext, principal: Principal, key: string | undefined) {
    const rule = route.upload!;
    rule.admit?.(ctx);
    const upload = await receiveUpload(req, { spool, timeoutMs: uploads.timeoutMs, screen: rule.screen });
    ctx.upload = upload;
    try {
      if (key === undefined) {
        writeAnswer(res, answerOf(await route.handle(ctx, clients)));
        return;
      }
      const fingerprint = upload.fingerprint;
      const keyed = withCallOptions(clients, { idempotency: { key: scopedKey(principal.credential_id, key), fingerprint } });
      const answer = await idempotency.run({ credentialId: principal.credential_id, key, fingerprint, requestId: ctx.requestId }, () =>
        route.handle(ctx, keyed).then(answerOf, (err: unknown) => errorAnswer(err, ctx.requestId)),
      );
      writeAnswer(res, answer);
    } finally {
      await upload.discard();
    }
  }

  function requireScopes(granted: readonly string[], needed: ReturnType<typeof routeScopes>): void {
    const lacking = missingScope(granted, needed);
    if (lacking) throw new HttpError(403, 'insufficient_scope', `this credential lacks the ${lacking} scope`, { required_scope: lacking });
  }

  /** The request body as the operation's schema allows it: no body is {} where the body is optional. */
  function checkedBody(rule: RequestBodyRule, parsed: unknown): unknown {
    if (parsed === undefined && rule.required) throw new HttpError(422, 'missing_body', 'this request needs a JSON body', { field: 'body' });
    const body = parsed === undefined ? {} : parsed;
    if (!rule.validate(body)) {
      const problem = describeAjvError(rule.validate.errors![0]);
      throw new HttpError(422, problem.code, problem.message, { field: problem.field });
    }
    return body;
  }

  /** An empty PATCH: the record as GET shows it; a deleted one is 404, as any PATCH of it is. */
  async function unchanged(reader: RouteSpec, ctx: RequestContext): Promise<RouteResult> {
    const result = await reader.handle(ctx, clients);
    const deleted = (result.body as { deleted?: unknown } | undefined)?.deleted;
    if (deleted !== undefined && deleted !== null) throw new HttpError(404, 'resource_not_found', 'not found');
    return result;
  }

  let server: http.Server | undefined;
  return {
    app,
    listen: (port, host = '127.0.0.1') =>
      new Promise((resolve, reject) => {
        server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
          // One spelling per route for every matcher below (gateway/http/request-target.ts).
          req.url = normalizeTarget(req.url ?? '/');
          if (!lane.dispatch(req, res)) app(req, res);
        });
        server.once('error', reject);
        server.listen(port, host, () => resolve(server!));
      }),
    drain: async (drainOptions) => {
      await lifecycle.drain(server, drainOptions);
      await subscription.close();
    },
    close: async () => {
      await subscription.close();
      if (server) {
        const closing = new Promise((resolve) => server!.close(resolve));
        server.closeAllConnections?.();
        await closing;
      }
    },
  };
}
