// The reference page /docs (docs/decisions.md, "The reference"), opened in Chromium as a reader would:
// Scalar renders every operation of the served document, with no console error, and not one request
// leaves the gateway's origin (assets come from node_modules; fonts and telemetry are off) — so the
// page works offline and under its Content-Security-Policy, whose violations Chromium reports as
// console errors. Requests are observed, not intercepted: interception changes what Chromium asks for
// (it skips /favicon.ico, whose 404 a reader's console shows). "Try it" sends a real request.
import { Browser, chromium, Page } from 'playwright-core';
import { servedOpenApi } from '../../gateway/openapi/document';
import { createWorkspace } from '../support/fixtures';
import { startSystem, System } from '../support/system';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const doc = servedOpenApi();
const operations = Object.values(doc.paths as Record<string, Record<string, { summary?: string; operationId?: string }>>).flatMap((item) =>
  ['get', 'post', 'patch', 'put', 'delete'].filter((m) => item[m]).map((m) => item[m]),
);

let system: System;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
const DESCRIPTION_HEADINGS = ['Authentication', 'Limits', 'Retries and idempotency'];
const foreignRequests: string[] = [];

beforeAll(async () => {
  system = await startSystem({ mode: 'embedded' });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const context = await browser.newContext();
  const origin = new URL(system.baseUrl).origin;
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && !url.startsWith('blob:') && new URL(url).origin !== origin) foreignRequests.push(url);
  });
  page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  await page.goto(`${system.baseUrl}/docs`, { waitUntil: 'networkidle' });
  // Scalar renders progressively: wait (bounded) until every summary and section heading is in the page;
  // the tests then name any missing.
  const summaries = [...operations.map((op) => op.summary!), ...DESCRIPTION_HEADINGS];
  await page
    .waitForFunction(
      // Runs in the page: `document` is the browser's (this project compiles without the DOM library).
      (expected) => expected.every((summary) => (globalThis as unknown as { document: { body: { textContent: string | null } } }).document.body.textContent?.includes(summary)),
      summaries,
      { timeout: 120_000 },
    )
    .catch(() => undefined);
  // What the browser fetches once the page is up (an icon, lazy chunks) is in before the checks
  // (bounded: the checks then name what went wrong).
  await page.waitForLoadState('networkidle', { timeout: 60_000 }).catch(() => undefined);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
});

describe('GET /docs in a browser', () => {
  it('shows every operation of the document', async () => {
    const text = (await page.locator('body').textContent()) ?? '';
    const missing = operations.filter((op) => !text.includes(op.summary!)).map((op) => op.operationId);
    expect(missing).toEqual([]);
  });

  it('shows the authentication and limits sections of the description', async () => {
    const text = (await page.locator('body').textContent()) ?? '';
    for (const heading of DESCRIPTION_HEADINGS) expect(text).toContain(heading);
  });

  it('logs no console error (no Content-Security-Policy violation, no 404 of a favicon either)', () => {
    expect(consoleErrors).toEqual([]);
  });

  it('sends no request to another origin', () => {
    expect(foreignRequests).toEqual([]);
  });

  it('"try it": the operation\'s test-request client sends the call with the token given, to this origin, and shows the answer', async () => {
    const workspace = await createWorkspace(system);
    const heading = page.getByRole('heading', { name: 'Get the current user and credential', exact: true });
    await page.locator('section').filter({ has: heading }).last().locator('.show-api-client-button').click();
    const client = page.getByRole('dialog');
    await client.getByPlaceholder('Token').fill(workspace.pat);
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url() === `${system.baseUrl}/api/v1/user`),
      client.getByRole('button', { name: /^Send/ }).first().click(),
    ]);
    expect(answer.status()).toBe(200);
    expect(await answer.request().headerValue('authorization')).toBe(`Bearer ${workspace.pat}`);
    await expect(client.getByText(workspace.ownerEmail).first().waitFor({ timeout: 30_000 })).resolves.toBeUndefined();
    expect(consoleErrors).toEqual([]);
    expect(foreignRequests).toEqual([]);
  });

  it('is served with a Content-Security-Policy that allows scripts from the origin only', async () => {
    const res = await fetch(`${system.baseUrl}/docs`);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toMatch(/connect-src 'self'(;|$)/);
    expect(csp).not.toMatch(/unsafe-eval|https?:/);
    expect(await res.text()).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/);
  });
});
