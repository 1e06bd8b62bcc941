// Helpers of the edge suites: requests to the test-only echo route (EDGE_TEST_HOOKS=1, see
// gateway/edge/test-hooks.ts; not part of the OpenAPI document, so sent with plain fetch) and its latches.
import { randomUUID } from 'node:crypto';

export interface EchoResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface EchoOptions {
  token?: string;
  key?: string;
  body?: unknown;
  form?: FormData;
  raw?: string;
  route?: 'echo' | 'scoped';
  /** Latch to hold the request on, after it started executing. */
  hold?: string;
  status?: number;
  headers?: Record<string, string>;
}

export async function echo(baseUrl: string, options: EchoOptions = {}): Promise<EchoResponse> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.key !== undefined) headers['idempotency-key'] = options.key;
  if (options.hold) headers['x-test-hold'] = options.hold;
  if (options.status) headers['x-test-status'] = String(options.status);
  let body: string | FormData | undefined;
  if (options.form) body = options.form;
  else if (options.raw !== undefined) {
    body = options.raw;
    headers['content-type'] ??= 'application/json';
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${baseUrl}/api/v1/_test/edge/${options.route ?? 'echo'}`, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

export async function waitingOn(baseUrl: string, latch: string): Promise<number> {
  return ((await (await fetch(`${baseUrl}/_test/edge/latches/${latch}`)).json()) as { waiting: number }).waiting;
}

/** Resolves once `count` requests are held on the latch (polling the gateway that holds them). */
export async function held(baseUrl: string, latch: string, count = 1): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await waitingOn(baseUrl, latch)) < count) {
    if (Date.now() > deadline) throw new Error(`no ${count} request(s) held on ${latch} at ${baseUrl}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function release(baseUrl: string, latch: string): Promise<number> {
  return ((await (await fetch(`${baseUrl}/_test/edge/latches/${latch}/release`, { method: 'POST' })).json()) as { released: number }).released;
}

export async function executions(baseUrls: string[]): Promise<number> {
  let total = 0;
  for (const url of baseUrls) total += ((await (await fetch(`${url}/_test/edge/stats`)).json()) as { executions: number }).executions;
  return total;
}

export const newKey = () => randomUUID();
export const latch = () => `latch-${randomUUID()}`;
