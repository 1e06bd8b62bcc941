// Fuzz pass over the served OpenAPI document (/api/v1/openapi.json), bounded and seeded: for every
// operation, fast-check generates requests — valid by the document's schemas, and mutated (wrong types,
// huge and negative numbers, odd and multibyte strings, missing and extra fields, forged cursors, bad
// path ids, other media types) — and every answer must be a documented status below 500 whose body
// validates against the document (test/support/api.ts validates each response).
//
// FUZZ_SEED=<n> replays a run; FUZZ_RUNS=<n> sets the requests per operation (default 10:
// about 450 requests, under a minute per mode on a loaded machine).
import fc from 'fast-check';
import { Api, ApiResponse } from '../support/api';
import { docsWorkspace, DocsWorkspace, line } from '../support/documents';
import { startSystem, System } from '../support/system';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS = Number(process.env.FUZZ_RUNS ?? 10);
const METHODS = ['get', 'post', 'patch', 'delete'] as const;

let system: System;
let ws: DocsWorkspace;
let api: Api;
let doc: Json;
/** Ids that name real records of the workspace, per resource (and per body field), so generated
 * requests also reach the services and succeed, not only the gateway's refusals. */
const pools: Record<string, number[]> = {};

beforeAll(async () => {
  // A budget the fuzzer cannot exhaust: this suite is about answers, not rate limits.
  system = await startSystem({ env: { RATE_LIMIT_GENERAL: '1000000', RATE_LIMIT_ANONYMOUS: '1000000' } });
  ws = await docsWorkspace(system);
  api = ws.api;
  await system.cli('plan', 'set', '--workspace', String(ws.id), '--cap', 'bank_accounts=20');
  doc = (await (await fetch(`${system.baseUrl}/api/v1/openapi.json`)).json()) as Json;
  const bank = await api.post(`${ws.base}/bank_accounts`, { name: 'Fuzz', iban: 'DE89370400440532013000' });
  const invoice = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line()] });
  const issued = await api.post(`${ws.base}/invoices`, { purchaser_id: ws.purchaser, line_items: [line('500')] });
  await api.post(`${ws.base}/invoices/${issued.body.id}/issue`);
  const note = await api.post(`${ws.base}/credit_notes`, { invoice_id: issued.body.id });
  const proforma = await api.post(`${ws.base}/proformas`, { purchaser_id: ws.purchaser, line_items: [line()] });
  const quote = await api.post(`${ws.base}/quotes`, { purchaser_id: ws.purchaser, line_items: [line()] });
  const contacts = await api.get(`${ws.base}/contacts`);
  const expense = await api.post(`${ws.base}/expenses`, { expense: { supplier_id: contacts.body.data[0].id, currency: 'EUR', expense_items_attributes: [{ name: 'Fuzz', unit_price: '1' }] } });
  Object.assign(pools, {
    contacts: contacts.body.data.map((c: Json) => c.id),
    purchaser_id: [ws.purchaser, ws.purchaserNoMail],
    invoice_account_id: [ws.purchaser, ws.purchaserNoMail],
    bank_accounts: [bank.body.id],
    bank_account_id: [bank.body.id],
    invoices: [invoice.body.id, issued.body.id],
    invoice_id: [issued.body.id],
    credit_notes: [note.body.id],
    proformas: [proforma.body.id],
    quotes: [quote.body.id],
    expenses: [expense.body.id],
    supplier_id: contacts.body.data.map((c: Json) => c.id),
  });
}, 300_000);
afterAll(() => system?.stop());

// ---------------------------------------------------------------------------------------------------
// Values a careless or hostile client sends.

const ODD_STRINGS = ['', ' ', 'é', '😀'.repeat(40), '\u0000', '\u202e', 'null', 'undefined', '0', '-1', '1e309', 'NaN', '{}', '<script>', "' OR 1=1 --", '%00', '../..', 'x'.repeat(5000)];
const ODD_NUMBERS = [0, -1, 1.5, -0.000001, 2 ** 53, 2 ** 53 + 2, 1e20, 1e308, -1e308, Number.MAX_SAFE_INTEGER, 0.1 + 0.2];
const oddScalar = fc.oneof(fc.constantFrom<unknown>(...ODD_STRINGS, ...ODD_NUMBERS, null, true, false), fc.string({ unit: 'binary', maxLength: 30 }), fc.integer());
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: oddScalar },
  { weight: 1, arbitrary: fc.array(oddScalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), oddScalar, { maxKeys: 3 }) },
);

const ODD_PATH_IDS = ['0', '-1', '1.5', '1e3', '9007199254740992', '99999999999999999999', 'abc', '%C3%A9', '%F0%9F%98%80', '01', '%20', '1%2F2'];
const FORGED_CURSORS = ['x', 'é'.repeat(30), `${'A'.repeat(30)}.${'é'.repeat(22)}`, 'eyJhIjpbMV0sImYiOiJ4In0.AAAAAAAAAAAAAAAAAAAAAA', 'A'.repeat(3000), '..', '%'];

const ref = (pointer: string): Json => pointer.slice(2).split('/').reduce((node: Json, key) => node[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
const resolve = (schema: Json): Json => (schema?.$ref ? { ...resolve(ref(schema.$ref)), ...withoutRef(schema) } : schema);
const withoutRef = ({ $ref: _ignored, ...rest }: Json) => rest; // eslint-disable-line @typescript-eslint/no-unused-vars

const validDate = fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2100-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
const realId = (pool: string) => fc.constantFrom(...(pools[pool]?.length ? pools[pool] : [1]));
/** Field-specific values the services accept, so valid bodies get past their checks too. */
const KNOWN_GOOD: Record<string, string[]> = {
  registration_id: ['27074358', ''],
  vat_id: ['CZ27074358', ''],
  tax_id: ['CZ27074358', ''],
  phone: ['+420 123 456 789'],
  country_alpha2: ['cz', 'DE', 'sk'],
  iban: ['DE89370400440532013000', 'GB82WEST12345698765432', 'CZ6508000000192000145399'],
  swift: ['DEUTDEFF', 'GIBACZPX'],
  account_number: ['19-2000145399', '2600000001'],
  bank_code: ['0800', '1100'],
  quantity: ['1', '2.5', '0.000001'],
  unit_price: ['100', '12.50', '0'],
  vat_rate: ['21', '0', '12'],
  discount: ['0', '10'],
  exchange_rate: ['1', '25.125'],
};

/** Values valid by the schema (as far as a schema can say: ids may name no record, codes no currency). */
function valid(schema: Json, field = '', depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema ?? {});
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.oneOf || s.anyOf) return fc.oneof(...(s.oneOf ?? s.anyOf).map((option: Json) => valid(option, field, depth)));
  if (s.allOf) return valid(Object.assign({}, ...s.allOf.map(resolve)), field, depth);
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : ['string'];
  return fc.oneof(...types.map((type) => validOfType(type, s, field, depth)));
}

function validOfType(type: string, s: Json, field: string, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = s.minimum ?? -1000;
      const max = s.maximum ?? 1_000_000;
      const any = fc.integer({ min, max: Math.min(max, 1e6) });
      return pools[field] ? fc.oneof({ weight: 4, arbitrary: realId(field) }, { weight: 1, arbitrary: any }, { weight: 1, arbitrary: fc.constant(max) }) : any;
    }
    case 'number':
      return fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.double({ min: 0, max: 10_000, noNaN: true }));
    case 'array':
      return depth > 3 ? fc.constant([]) : fc.array(valid(s.items ?? {}, field, depth + 1), { maxLength: Math.min(s.maxItems ?? 3, 3) });
    case 'object': {
      if (depth > 3) return fc.constant({});
      const properties = (s.properties ?? {}) as Json;
      const required = new Set<string>(s.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties)) record[name] = valid(property as Json, name, depth + 1);
      return fc.record(record, { requiredKeys: Object.keys(properties).filter((name) => required.has(name)) });
    }
    default:
      return validString(s, field);
  }
}

function validString(s: Json, field: string): fc.Arbitrary<string> {
  if (s.format === 'date') return validDate;
  if (s.format === 'date-time') return validDate.map((d) => `${d}T12:00:00Z`);
  if (s.format === 'email' || /email|^to$|^cc$|^bcc$/.test(field)) return fc.constantFrom('a@example.com', 'ap@customer.example');
  if (KNOWN_GOOD[field]) return fc.constantFrom(...KNOWN_GOOD[field]);
  if (s.pattern === '^[A-Za-z]{3}$') return fc.constantFrom('CZK', 'CZK', 'czk', 'EUR', 'XXX', 'QQQ');
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= (s.maxLength ?? 100));
  return fc.string({ maxLength: Math.min(s.maxLength ?? 40, 40), unit: fc.constantFrom('a', 'Z', ' ', '-', 'é', '1', '😀') }).filter((v) => v.length >= (s.minLength ?? 0));
}

/** A valid value, or one broken in one place: a field replaced, removed, or added. */
function mutated(schema: Json): fc.Arbitrary<unknown> {
  return valid(schema).chain((value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return fc.oneof(fc.constant(value), oddValue);
    const keys = Object.keys(value as Json);
    const s = resolve(schema);
    const known = Object.keys(s.properties ?? {});
    return fc.oneof(
      fc.constant(value),
      keys.length ? fc.tuple(fc.constantFrom(...keys), oddValue).map(([key, odd]) => ({ ...(value as Json), [key]: odd })) : fc.constant(value),
      known.length ? fc.tuple(fc.constantFrom(...known), oddValue).map(([key, odd]) => ({ ...(value as Json), [key]: odd })) : fc.constant(value),
      keys.length ? fc.constantFrom(...keys).map((key) => Object.fromEntries(Object.entries(value as Json).filter(([k]) => k !== key))) : fc.constant(value),
      fc.tuple(fc.string({ minLength: 1, maxLength: 10 }), oddValue).map(([key, odd]) => ({ ...(value as Json), [key]: odd })),
      oddValue,
    );
  });
}

// ---------------------------------------------------------------------------------------------------

interface Generated {
  path: string;
  body?: unknown;
  raw?: { bytes: string; type?: string };
  headers: Record<string, string>;
}

function requestOf(template: string, method: string, operation: Json, pathItem: Json): fc.Arbitrary<Generated> {
  const params = [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])].map(resolve);
  const resource = /\/([a-z_]+)\/\{id\}/.exec(template)?.[1] ?? '';
  const pathId = fc.oneof(
    { weight: 6, arbitrary: realId(resource).map(String) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 1e6 }).map(String) },
    { weight: 2, arbitrary: fc.constantFrom(...ODD_PATH_IDS) },
  );
  const accountId = fc.oneof(
    { weight: 12, arbitrary: fc.constant(String(ws.id)) },
    { weight: 1, arbitrary: fc.oneof(fc.integer({ min: 1, max: 1e6 }).map(String), fc.constantFrom(...ODD_PATH_IDS)) },
  );
  const query = fc.record(
    Object.fromEntries(
      params
        .filter((p) => p.in === 'query')
        .map((p) => [
          p.name,
          p.name === 'cursor'
            ? fc.constantFrom(...FORGED_CURSORS)
            : p.name === 'limit'
              ? fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 100 }).map(String) }, { weight: 1, arbitrary: fc.constantFrom('0', '101', '-1', 'abc', '1e2', '99999999', '1.5', '') })
              : fc.oneof(validString(p.schema ?? {}, p.name), fc.constantFrom(...ODD_STRINGS.filter((v) => v.length < 300))),
        ]),
    ),
    { requiredKeys: [] },
  ).filter((q) => !('cursor' in q) || Math.abs(JSON.stringify(q).length % 3) === 0); // a forged cursor in about a third
  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
  const jsonBody: fc.Arbitrary<unknown> = bodySchema ? fc.oneof({ weight: 2, arbitrary: valid(bodySchema) }, { weight: 3, arbitrary: mutated(bodySchema) }) : fc.oneof(fc.constant(undefined), fc.constant({}), oddValue);
  const hasBody = method === 'post' || method === 'patch';
  const body = hasBody
    ? fc.oneof(
        { weight: 8, arbitrary: jsonBody.map((value) => ({ body: value })) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(jsonBody, fc.constantFrom<string | undefined>(undefined, 'text/plain', 'application/x-www-form-urlencoded', 'application/json', 'application/json; charset=latin1', 'multipart/form-data'))
            .map(([value, type]) => ({ raw: { bytes: value === undefined ? '{' : JSON.stringify(value), type } })),
        },
      )
    : fc.constant({});
  const idempotencyKey =
    method === 'post'
      ? fc.oneof(
          { weight: 4, arbitrary: fc.constant(undefined) },
          { weight: 2, arbitrary: fc.uuid() },
          { weight: 1, arbitrary: fc.oneof(fc.constantFrom('', 'é', 'k'.repeat(256), 'a b'), fc.string({ minLength: 1, maxLength: 20 })) },
        )
      : fc.constant(undefined);
  return fc.record({ accountId, id: pathId, query, body, idempotencyKey }).map(({ accountId: account, id, query: q, body: b, idempotencyKey: key }) => {
    const path = template.replace('{account_id}', account).replace('{id}', id);
    const search = new URLSearchParams(q as Record<string, string>).toString();
    const headers: Record<string, string> = {};
    if (key !== undefined) headers['idempotency-key'] = key;
    return { path: `/api/v1${path}${search ? `?${search}` : ''}`, headers, ...(b as Partial<Generated>) };
  });
}

async function send(method: string, request: Generated): Promise<ApiResponse> {
  const headers = { ...request.headers };
  if (request.raw) {
    if (request.raw.type) headers['content-type'] = request.raw.type;
    // A Buffer body gets no Content-Type of its own from fetch.
    return api.request(method.toUpperCase(), request.path, { rawBody: Buffer.from(request.raw.bytes), headers });
  }
  return api.request(method.toUpperCase(), request.path, { body: request.body, headers });
}

const operations = () =>
  Object.entries(doc.paths as Json).flatMap(([template, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ template, method, operation: item[method] as Json, item: item as Json })),
  );

describe('fuzz: every operation of the served document', () => {
  it(`answers every generated request with a documented status below 500 and a body the document allows (seed ${SEED})`, async () => {
    const failures: string[] = [];
    const statuses = new Map<string, Map<string, number>>();
    // sign_out ends the session it is called with; the fuzzer's credential is a PAT, but keep it last.
    // Deletions run after the other operations (they would remove the records the others act on).
    const rank = (op: { method: string; operation: Json }) => (op.operation.operationId === 'signOut' ? 2 : op.method === 'delete' ? 1 : 0);
    const ordered = operations().sort((a, b) => rank(a) - rank(b));
    for (const [index, { template, method, operation, item }] of ordered.entries()) {
      const declared = Object.keys(operation.responses ?? {});
      const result = await fc.check(
        fc.asyncProperty(requestOf(template, method, operation, item), async (request) => {
          let res: ApiResponse;
          try {
            res = await send(method, request);
          } catch (err) {
            throw new Error(`${(err as Error).message}`);
          }
          const seen = statuses.get(`${method} ${template}`) ?? new Map<string, number>();
          const outcome = `${res.status}${res.body?.error?.code ? ` ${res.body.error.code}` : ''}`;
          seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
          statuses.set(`${method} ${template}`, seen);
          if (res.status >= 500) throw new Error(`${res.status}: ${res.text.slice(0, 300)}`);
          if (!declared.includes(String(res.status))) throw new Error(`status ${res.status} is not declared: ${res.text.slice(0, 300)}`);
        }),
        // One seed per operation (derived from SEED): otherwise every operation draws the same
        // Idempotency-Keys, and they collide (409) across operations.
        { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
      );
      if (result.failed) {
        const example = JSON.stringify(result.counterexample?.[0]).slice(0, 600);
        failures.push(`${method.toUpperCase()} ${template} (FUZZ_SEED=${SEED}, operation seed ${SEED + index}): ${(result.errorInstance as Error | undefined)?.message?.slice(0, 600)}\n  request: ${example}`);
      }
    }
    if (process.env.FUZZ_VERBOSE) for (const [op, seen] of statuses) console.log(op, JSON.stringify(Object.fromEntries(seen)));
    expect(failures).toEqual([]);
    // The generator reaches the services, not only the gateway's refusals: most operations succeed sometimes.
    const succeeded = [...statuses.values()].filter((seen) => [...seen.keys()].some((outcome) => /^2/.test(outcome))).length;
    expect(succeeded).toBeGreaterThan(statuses.size / 2);
  }, 300_000);
});
