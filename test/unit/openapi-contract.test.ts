// The OpenAPI document as the gateway serves it (docs/decisions.md, "The reference"): every operation of
// the merged document — whichever resource file adds it — is held to the same bar: tagged, summarized,
// described; every header and every response it can give documented; an example for every JSON request
// and response body, each valid against its own schema. Black-box tests validate live responses
// (test/support/api.ts); this validates what the document promises on its own.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { servedOpenApi } from '../../gateway/openapi/document';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const doc = servedOpenApi();
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const operations = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
  METHODS.filter((method) => (item as Json)[method]).map((method) => ({ path, method, op: (item as Json)[method] as Json, name: `${method.toUpperCase()} ${path}` })),
);

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
function resolve(node: Json): Json {
  let current = node;
  while (current?.$ref) {
    current = String(current.$ref)
      .replace(/^#\//, '')
      .split('/')
      .reduce((at: Json, part) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return current;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addSchema(doc, 'openapi');

/** Every JSON body of the document: request bodies and responses, with the pointer to its schema. */
const bodies = operations.flatMap(({ path, method, op, name }) => {
  const found: Array<{ label: string; media: Json; schemaPointer: string }> = [];
  const opPointer = `/paths/${escape(path)}/${method}`;
  if (op.requestBody) {
    const media = resolve(op.requestBody).content?.['application/json'];
    if (media) found.push({ label: `${name} request body`, media, schemaPointer: `${opPointer}/requestBody/content/application~1json/schema` });
  }
  for (const [status, response] of Object.entries(op.responses as Json)) {
    const shared = (response as Json).$ref ? String((response as Json).$ref).replace(/^#/, '') : `${opPointer}/responses/${status}`;
    const media = resolve(response as Json).content?.['application/json'];
    if (media) found.push({ label: `${name} → ${status}`, media, schemaPointer: `${shared}/content/application~1json/schema` });
  }
  return found;
});

function examplesOf(media: Json): Array<[string, unknown]> {
  if (media.example !== undefined) return [['example', media.example]];
  return Object.entries((media.examples ?? {}) as Json).map(([key, example]) => [key, resolve(example as Json).value]);
}

describe('OpenAPI: every operation is documented for a reader', () => {
  const declaredTags = new Map(((doc.tags ?? []) as Json[]).map((tag) => [tag.name as string, tag.description as string]));

  it.each(operations.map((o) => [o.name, o.op]))('%s has an operationId, tags declared with a description, a summary and a description', (_name, op) => {
    expect(op.operationId).toMatch(/^[a-z][A-Za-z0-9]+$/);
    expect(op.tags?.length).toBeGreaterThan(0);
    for (const tag of op.tags) expect(declaredTags.get(tag)).toEqual(expect.stringMatching(/\S/));
    expect(op.summary).toEqual(expect.stringMatching(/\S/));
    expect(op.summary.length).toBeLessThanOrEqual(60);
    expect(op.description).toEqual(expect.stringMatching(/\S/));
  });

  it('operationIds are unique', () => {
    const ids = operations.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('the description explains authentication and the limits', () => {
    expect(doc.info.description).toMatch(/## Authentication/);
    expect(doc.info.description).toMatch(/## Limits/);
    expect(doc.components.securitySchemes.bearer.description).toMatch(/inv_pat_/);
  });
});

describe('OpenAPI: every response each operation can give, with its headers', () => {
  it.each(operations.map((o) => [o.name, o]))('%s documents 429, 503 and, with a body, 400, 413, 415 and 422', (_name, { method, op }) => {
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['429', '503', 'default']));
    if (method === 'post' || method === 'patch') expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '413', '415', '422']));
  });

  it.each(operations.filter((o) => o.method === 'post').map((o) => [o.name, o.op]))('%s takes an Idempotency-Key and may answer 409 or a replay', (_name, op) => {
    expect(op.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(op.responses['409']).toBeDefined();
    for (const [status, response] of Object.entries(op.responses as Json)) {
      if (/^2/.test(status)) expect(Object.keys(resolve(response).headers ?? {})).toEqual(expect.arrayContaining(['Idempotent-Replayed', 'X-Original-Request-Id']));
    }
  });

  const responses = operations.flatMap(({ name, op }) => Object.entries(op.responses as Json).map(([status, response]) => [`${name} → ${status}`, status, resolve(response)] as const));

  it.each(responses)('%s declares X-Request-Id and the X-RateLimit-* headers', (_label, status, response) => {
    const headers = Object.keys((response as Json).headers ?? {});
    expect(headers).toEqual(expect.arrayContaining(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
    if (status === '429' || status === '503') expect(headers).toContain('Retry-After');
  });

  it.each(operations.filter((o) => (o.op.parameters ?? []).some((p: Json) => resolve(p).name === 'If-None-Match')).map((o) => [o.name, o.op]))(
    '%s, which honours If-None-Match, answers 304 and an ETag',
    (_name, op) => {
      expect(op.responses['304']).toBeDefined();
      expect(Object.keys(resolve(op.responses['200']).headers)).toContain('ETag');
      expect(Object.keys(resolve(op.responses['304']).headers)).toContain('ETag');
    },
  );
});

describe('OpenAPI: an example for every JSON body, valid against its schema', () => {
  it('finds the bodies of every operation', () => {
    expect(bodies.length).toBeGreaterThan(operations.length);
  });

  it.each(bodies.map((b) => [b.label, b]))('%s has an example that its schema accepts', (_label, { media, schemaPointer }) => {
    const examples = examplesOf(media);
    expect(examples.length).toBeGreaterThan(0);
    const validate = ajv.getSchema(`openapi#${schemaPointer}`)!;
    for (const [key, value] of examples) {
      expect(value).toBeDefined();
      const valid = validate(value);
      expect({ key, errors: valid ? null : validate.errors }).toEqual({ key, errors: null });
    }
  });
});

describe('OpenAPI: schemas use only schema keywords', () => {
  // A YAML slip (an unquoted `, ` inside a flow mapping) turns the rest of a description into a bogus
  // key that no validator complains about: every key of every schema must be a keyword.
  const KEYWORDS = new Set([
    '$ref', 'type', 'properties', 'required', 'additionalProperties', 'items', 'description', 'enum', 'const', 'format', 'pattern',
    'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'minItems', 'maxItems',
    'uniqueItems', 'oneOf', 'anyOf', 'allOf', 'not', 'default', 'example', 'examples', 'title', 'readOnly', 'writeOnly', 'deprecated',
    'contentMediaType', 'contentEncoding', 'discriminator',
  ]);
  const strays: string[] = [];
  function walk(schema: unknown, at: string): void {
    if (!schema || typeof schema !== 'object') return;
    for (const [key, value] of Object.entries(schema as Json)) {
      if (!KEYWORDS.has(key)) strays.push(`${at}: ${key}`);
      if (key === 'properties') for (const [name, sub] of Object.entries(value as Json)) walk(sub, `${at}.${name}`);
      if (key === 'items' || key === 'not' || (key === 'additionalProperties' && typeof value === 'object')) walk(value, `${at}[${key}]`);
      if (['oneOf', 'anyOf', 'allOf'].includes(key)) (value as unknown[]).forEach((sub, i) => walk(sub, `${at}.${key}[${i}]`));
    }
  }
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) walk(schema, name);
  for (const { label, media } of bodies) walk(media.schema, label);

  it('no schema has a key that is not a keyword', () => {
    expect(strays).toEqual([]);
  });
});
