// The edge policies apply to every operation, so the served OpenAPI document gets them from here —
// the same place that enforces them — rather than from each resource file: every operation may
// answer 429 and carries the rate-limit headers; every POST takes Idempotency-Key, may answer 409
// and 400 (malformed key), and its success answers may be replays; every POST and PATCH may answer
// 400, 413, 415 and 422 for its body (gateway/edge/body.ts); every PATCH and DELETE 409 (a write
// whose compare-and-set attempts all lost: concurrent_modification); every operation with a path
// parameter 400 (a path that is not valid percent-encoding); every authenticated operation 401, and
// every workspace operation 402, 403 and 404 (workspace gating); every operation calls a service, so
// may answer 503 (with Retry-After) and 504 (past the call's deadline, gateway/http/errors.ts); every
// response carries X-Request-Id. The components referenced here (parameters.IdempotencyKey,
// headers.*, responses.TooManyRequests / Conflict / WriteConflict / GatewayTimeout) live in openapi.yaml.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];
const ref = (pointer: string) => ({ $ref: pointer });
const EVERY_RESPONSE_HEADERS = ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
const REPLAY_HEADERS = ['Idempotent-Replayed', 'X-Original-Request-Id'];

export function withEdgePolicies(doc: Json): Json {
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const operation = item?.[method] as Json | undefined;
      if (!operation) continue;
      const responses = (operation.responses ??= {}) as Json;
      responses['429'] ??= ref('#/components/responses/TooManyRequests');
      responses['503'] ??= ref('#/components/responses/ServiceUnavailable');
      responses['504'] ??= ref('#/components/responses/GatewayTimeout');
      // express refuses a path parameter it cannot percent-decode before any route runs.
      if (path.includes('{')) responses['400'] ??= ref('#/components/responses/BadRequest');
      // Authentication, scopes and workspace gating are the gateway's, before any route runs.
      const authenticated = !(Array.isArray(operation.security) && operation.security.length === 0);
      if (authenticated) responses['401'] ??= ref('#/components/responses/Unauthorized');
      if (path.startsWith('/accounts/{account_id}')) {
        responses['402'] ??= ref('#/components/responses/PaymentRequired');
        responses['403'] ??= ref('#/components/responses/Forbidden');
        responses['404'] ??= ref('#/components/responses/NotFound');
      }
      const post = method === 'post';
      if (post) {
        const parameters = (operation.parameters ??= []) as Json[];
        if (!parameters.some((p) => p.$ref === '#/components/parameters/IdempotencyKey')) {
          parameters.push(ref('#/components/parameters/IdempotencyKey'));
        }
        responses['400'] ??= ref('#/components/responses/BadRequest');
        responses['409'] ??= ref('#/components/responses/Conflict');
      }
      if (method === 'patch' || method === 'delete') responses['409'] ??= ref('#/components/responses/WriteConflict');
      if (post || method === 'patch') {
        // Every request body is read by gateway/edge/body.ts, with the same limits and refusals.
        responses['400'] ??= ref('#/components/responses/BadRequest');
        responses['413'] ??= ref('#/components/responses/PayloadTooLarge');
        responses['415'] ??= ref('#/components/responses/UnsupportedMediaType');
        // Bodies are validated against this document (422), also where an operation declares none.
        responses['422'] ??= ref('#/components/responses/Unprocessable');
      }
      for (const [status, response] of Object.entries(responses) as Array<[string, Json]>) {
        if (response.$ref) continue; // shared responses declare their headers in openapi.yaml
        const headers = (response.headers ??= {}) as Json;
        for (const name of EVERY_RESPONSE_HEADERS) headers[name] ??= ref(`#/components/headers/${name}`);
        if (post && /^[23]/.test(status)) for (const name of REPLAY_HEADERS) headers[name] ??= ref(`#/components/headers/${name}`);
      }
    }
  }
  return doc;
}
