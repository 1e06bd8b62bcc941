// HTTP client of the black-box suite. Every response it receives is validated against the OpenAPI
// document (gateway/openapi), so the document and the running API cannot drift apart.
import { OpenApiValidator, servedOpenApi } from '../../gateway/openapi/document';

// The document the gateway serves: the resource files plus the edge policies (429, 409, 413, 415…).
const validator = new OpenApiValidator(servedOpenApi());
const templates = Object.keys(validator.doc.paths ?? {}).map((template) => ({
  template,
  re: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
}));

export interface ApiResponse<T = any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  status: number;
  headers: Headers;
  body: T;
  text: string;
  /** The raw body (binary responses: PDFs). */
  bytes: Buffer;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent verbatim (for malformed JSON tests). */
  rawBody?: string | Buffer | FormData;
  headers?: Record<string, string>;
}

function operationOf(method: string, path: string): string | undefined {
  const pathname = path.split('?')[0].replace(/^\/api\/v1/, '');
  return templates.find((t) => t.re.test(pathname) && validator.operation(method, t.template))?.template;
}

export class Api {
  constructor(readonly baseUrl: string, readonly token?: string) {}

  as(token: string | undefined): Api {
    return new Api(this.baseUrl, token);
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const token = options.token === undefined ? this.token : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | Buffer | FormData | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body });
    const bytes = Buffer.from(await res.arrayBuffer());
    const text = bytes.toString('utf8');
    const isJson = res.headers.get('content-type')?.includes('application/json');
    const parsed = isJson && text ? JSON.parse(text) : text;
    this.validate(method.toLowerCase(), path, res.status, parsed, isJson ?? false);
    return { status: res.status, headers: res.headers, body: parsed, text, bytes };
  }

  private validate(method: string, path: string, status: number, body: unknown, isJson: boolean): void {
    if (!path.startsWith('/api/v1')) return;
    const template = operationOf(method, path);
    if (!template) {
      if (status === 404 && isJson) return; // unknown routes answer with the generic error body
      throw new Error(`${method.toUpperCase()} ${path} is not in the OpenAPI document`);
    }
    // Every status an operation gives is listed explicitly: `default` stands only for the unexpected 500.
    if (status !== 500 && !(String(status) in (validator.operation(method, template)?.responses ?? {}))) {
      throw new Error(`${method.toUpperCase()} ${template} answered ${status}, which its responses in the OpenAPI document do not list`);
    }
    if (status === 204 || status === 304 || !isJson) return;
    const validate = validator.responseBody(method, template, status);
    if (!validate) throw new Error(`${method.toUpperCase()} ${template} has no documented ${status} response`);
    if (!validate(body)) {
      throw new Error(
        `${method.toUpperCase()} ${path} → ${status} does not match the OpenAPI document: ${JSON.stringify(validate.errors?.slice(0, 3))}\nbody: ${JSON.stringify(body).slice(0, 800)}`,
      );
    }
  }

  get = (path: string, options?: RequestOptions) => this.request('GET', path, options);
  post = (path: string, body?: unknown, options: RequestOptions = {}) => this.request('POST', path, { ...options, body });
  patch = (path: string, body?: unknown, options: RequestOptions = {}) => this.request('PATCH', path, { ...options, body });
  delete = (path: string, options?: RequestOptions) => this.request('DELETE', path, options);
}

/** Polls until `check` passes: for effects that travel over the bus (cache evictions in other processes). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Runs `check` once through each gateway (`baseUrls`: System.baseUrls), with `api`'s credential. For
 * effects each gateway applies on its own — a cache evicted by a bus event reaches every gateway's cache
 * separately — an `eventually` around it waits until every gateway shows the effect, so the requests
 * after it see it whichever gateway the proxy picks (cluster mode: two gateways; else: one).
 */
export async function onEveryGateway(baseUrls: string[], api: Api, check: (api: Api) => Promise<unknown>): Promise<void> {
  for (const url of baseUrls) await check(new Api(url, api.token));
}
