// The OpenAPI document as the gateway serves it (docs/decisions.md, "The reference"): every operation of
// the merged document — whichever resource file adds it — is held to the same bar: tagged, summarized,
// described; every header and every response it can give documented; an example for every request
// and response body (JSON, multipart and binary alike), each valid against its own schema, and so is
// every header's and parameter's example. Black-box tests validate live responses
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

/** Every body of the document, in every media type: request bodies and responses, with the pointer to its schema. */
const bodies = operations.flatMap(({ path, method, op, name }) => {
  const found: Array<{ label: string; media: Json; schemaPointer: string }> = [];
  const opPointer = `/paths/${escape(path)}/${method}`;
  if (op.requestBody) {
    for (const [type, media] of Object.entries((resolve(op.requestBody).content ?? {}) as Json)) {
      found.push({ label: `${name} request body (${type})`, media, schemaPointer: `${opPointer}/requestBody/content/${escape(type)}/schema` });
    }
  }
  for (const [status, response] of Object.entries(op.responses as Json)) {
    const shared = (response as Json).$ref ? String((response as Json).$ref).replace(/^#/, '') : `${opPointer}/responses/${status}`;
    for (const [type, media] of Object.entries((resolve(response as Json).content ?? {}) as Json)) {
      found.push({ label: `${name} → ${status} (${type})`, media, schemaPointer: `${shared}/content/${escape(type)}/schema` });
    }
  }
  return found;
});

/** Every example of a header or a parameter (operation-level, path-level and shared), with its schema's pointer. */
const headerAndParameterExamples = (() => {
  const found: Array<{ label: string; value: unknown; schemaPointer: string }> = [];
  const collect = (node: Json, pointer: string, label: string) => {
    if (!node || node.$ref) return;
    for (const value of [node.example, ...Object.values((node.examples ?? {}) as Json).map((e) => resolve(e as Json).value)]) {
      if (value !== undefined) found.push({ label, value, schemaPointer: `${pointer}/schema` });
    }
  };
  for (const [name, header] of Object.entries((doc.components.headers ?? {}) as Json)) collect(header, `/components/headers/${escape(name)}`, `header ${name}`);
  for (const [name, parameter] of Object.entries((doc.components.parameters ?? {}) as Json)) collect(parameter, `/components/parameters/${escape(name)}`, `parameter ${name}`);
  for (const [name, response] of Object.entries((doc.components.responses ?? {}) as Json)) {
    for (const [header, node] of Object.entries(((response as Json).headers ?? {}) as Json)) collect(node, `/components/responses/${escape(name)}/headers/${escape(header)}`, `${name} header ${header}`);
  }
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    ((item as Json).parameters ?? []).forEach((p: Json, i: number) => collect(p, `/paths/${escape(path)}/parameters/${i}`, `${path} parameter ${p.name}`));
  }
  for (const { path, method, op, name } of operations) {
    const opPointer = `/paths/${escape(path)}/${method}`;
    (op.parameters ?? []).forEach((p: Json, i: number) => collect(p, `${opPointer}/parameters/${i}`, `${name} parameter ${p.name}`));
    for (const [status, response] of Object.entries(op.responses as Json)) {
      for (const [header, node] of Object.entries(((response as Json).headers ?? {}) as Json)) collect(node, `${opPointer}/responses/${status}/headers/${escape(header)}`, `${name} → ${status} header ${header}`);
    }
  }
  return found;
})();

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

  it('summaries are unique (a reader tells operations apart by them; /docs is checked by them)', () => {
    const summaries = operations.map((o) => o.op.summary);
    expect(summaries.filter((summary, i) => summaries.indexOf(summary) !== i)).toEqual([]);
  });

  it('the description explains authentication and the limits', () => {
    expect(doc.info.description).toMatch(/## Authentication/);
    expect(doc.info.description).toMatch(/## Limits/);
    expect(doc.components.securitySchemes.bearer.description).toMatch(/inv_pat_/);
  });
});

describe('OpenAPI: every response each operation can give, with its headers', () => {
  it.each(operations.map((o) => [o.name, o]))(
    '%s documents 429, 503, 504; with a body 400, 413, 415 and 422; as a PATCH or DELETE 409; with a path parameter 400',
    (_name, { path, method, op }) => {
      const statuses = Object.keys(op.responses);
      expect(statuses).toEqual(expect.arrayContaining(['429', '503', '504', 'default']));
      if (method === 'post' || method === 'patch') expect(statuses).toEqual(expect.arrayContaining(['400', '413', '415', '422']));
      // concurrent_modification: a write whose compare-and-set attempts all lost (services/shared/store/port.ts mutate).
      if (method === 'patch' || method === 'delete') expect(statuses).toContain('409');
      // express refuses a path it cannot percent-decode (`%zz`) with 400 before any route runs.
      if (path.includes('{')) expect(statuses).toContain('400');
    },
  );

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

describe('OpenAPI: an example for every body, valid against its schema', () => {
  it('finds the bodies of every operation, binary and multipart ones too', () => {
    expect(bodies.length).toBeGreaterThan(operations.length);
    expect(bodies.map((b) => b.label)).toEqual(expect.arrayContaining([
      'POST /accounts/{account_id}/expenses/upload request body (multipart/form-data)',
      'GET /accounts/{account_id}/invoices/{id}/pdf → 200 (application/pdf)',
    ]));
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

describe('OpenAPI: every example of a header or a parameter is valid against its schema', () => {
  it('finds them (the shared headers, the PDF ETag, the Idempotency-Key)', () => {
    expect(headerAndParameterExamples.map((e) => e.label)).toEqual(expect.arrayContaining(['header X-Request-Id', 'header PdfETag', 'parameter IdempotencyKey']));
  });

  it.each(headerAndParameterExamples.map((e) => [e.label, e]))('%s', (_label, { value, schemaPointer }) => {
    const validate = ajv.getSchema(`openapi#${schemaPointer}`)!;
    expect(validate).toBeDefined();
    expect({ value, errors: validate(value) ? null : validate.errors }).toEqual({ value, errors: null });
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
