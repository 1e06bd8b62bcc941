// The OpenAPI 3.1 document is the source of truth of the HTTP contract. It is authored as YAML:
// openapi.yaml (info, shared components) plus one file per resource under resources/, merged here.
// The gateway validates request bodies against it; the black-box suite validates every response.
import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { repoRoot } from '../../services/shared/paths';
import { withEdgePolicies } from '../edge/openapi';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const dir = path.join(repoRoot, 'gateway/openapi');

export function loadOpenApi(): Json {
  const doc = YAML.parse(readFileSync(path.join(dir, 'openapi.yaml'), 'utf8')) as Json;
  const resources = path.join(dir, 'resources');
  for (const file of readdirSync(resources).filter((f) => f.endsWith('.yaml')).sort()) {
    const part = YAML.parse(readFileSync(path.join(resources, file), 'utf8')) as Json;
    Object.assign((doc.paths ??= {}), part.paths ?? {});
    for (const [kind, entries] of Object.entries((part.components ?? {}) as Json)) {
      Object.assign(((doc.components ??= {})[kind] ??= {}), entries);
    }
  }
  return doc;
}

/** The document as the gateway serves and enforces it: merged, with the edge policies applied. */
export function servedOpenApi(): Json {
  return withEdgePolicies(loadOpenApi());
}

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Express path (`/accounts/:account_id`) → OpenAPI path (`/accounts/{account_id}`). */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([a-z_]+)/g, '{$1}');
}

export interface RequestBodyRule {
  /** Whether the operation declares a request body at all. */
  declared: boolean;
  /** Whether a request without body (no bytes) is refused (422 missing_body). */
  required: boolean;
  validate: ValidateFunction;
}

/** The body of an operation that takes none: absent, or an object without fields. */
const NO_FIELDS = { type: 'object', additionalProperties: false };

export class OpenApiValidator {
  private readonly ajv: Ajv2020;
  private noBody?: ValidateFunction;

  constructor(readonly doc: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema(doc, 'openapi');
  }

  private compile(pointer: string): ValidateFunction | undefined {
    return this.ajv.getSchema(`openapi#${pointer}`) ?? undefined;
  }

  operation(method: string, apiPath: string): Json | undefined {
    return this.doc.paths?.[apiPath]?.[method];
  }

  /**
   * How an operation takes its JSON request body. An operation that declares none still reads one
   * (so nothing a client sends is silently ignored): only no body or an empty object passes.
   */
  requestBody(method: string, apiPath: string): RequestBodyRule {
    const body = this.operation(method, apiPath)?.requestBody as Json | undefined;
    if (!body) return { declared: false, required: false, validate: (this.noBody ??= this.ajv.compile(NO_FIELDS)) };
    const validate = this.compile(`/paths/${escape(apiPath)}/${method}/requestBody/content/application~1json/schema`);
    if (!validate) throw new Error(`${method} ${apiPath}: the request body has no application/json schema`);
    return { declared: true, required: body.required === true, validate };
  }

  /** Validator of a response body by status (falling back to `default`). */
  responseBody(method: string, apiPath: string, status: number): ValidateFunction | undefined {
    const responses = this.operation(method, apiPath)?.responses ?? {};
    const key = String(status) in responses ? String(status) : 'default';
    const content = responses[key]?.content?.['application/json'];
    if (!content && responses[key]?.$ref) {
      const name = String(responses[key].$ref).split('/').pop() as string;
      return this.compile(`/components/responses/${escape(name)}/content/application~1json/schema`);
    }
    if (!content) return undefined;
    return this.compile(`/paths/${escape(apiPath)}/${method}/responses/${key}/content/application~1json/schema`);
  }
}

export function describeAjvError(error: ErrorObject): { field: string; message: string; code: string } {
  const base = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    const field = base ? `${base}.${extra}` : extra;
    return { field, message: `${field} is not a field of this request`, code: 'unknown_field' };
  }
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    const field = base ? `${base}.${missing}` : missing;
    return { field, message: `${field} is required`, code: 'missing_field' };
  }
  const field = base || 'body';
  return { field, message: `${field} ${error.message ?? 'is invalid'}`, code: error.keyword === 'type' ? 'invalid_type' : 'invalid_value' };
}
