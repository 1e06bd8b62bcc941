// Chromium loads nothing but data: URLs (docs/rendering.md "Request blocking and CSP"), against a real
// Chromium and a local HTTP server that counts what reaches it: markup naming an external image,
// stylesheet, frame, font or background makes no request, and the PDF still renders. The document
// template carries a Content-Security-Policy, and the printed document is the same with it as without.
import { once } from 'node:events';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { ChromiumPool } from '../../services/rendering/adapters/chromium-pool';
import { workerChromiumDriver } from '../../services/rendering/adapters/chromium-worker';
import { handlebarsTemplate } from '../../services/rendering/adapters/handlebars-template';
import { Pdfs } from '../../services/rendering/domain/pdfs';
import { renderInput } from '../../services/rendering/domain/render-input';
import { createLogger } from '../../services/shared/logger';
import { embeddedFonts, pdfText } from '../support/pdf';
import { printable, workspace } from '../unit/rendering.fixtures';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CSP = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; base-uri 'none'; form-action 'none'">`;

let server: http.Server;
let hits: string[] = [];
let origin: string;
const blocked: string[] = [];
let pool: ChromiumPool;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': req.url?.endsWith('.css') ? 'text/css' : 'image/png' });
    res.end(req.url?.endsWith('.css') ? 'body { color: red }' : '');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pool = new ChromiumPool({
    executablePath: CHROMIUM,
    poolSize: 1,
    timeoutMs: 30_000,
    queueMax: 4,
    log: createLogger('test'),
    driver: workerChromiumDriver({ onBlocked: (url) => blocked.push(url) }),
  });
});
beforeEach(() => {
  hits = [];
  blocked.length = 0;
});
afterAll(async () => {
  await pool?.close();
  server?.close();
});

/** Markup that, were it ever to reach a page, would fetch from the test server. */
const external = () => `
  <link rel="stylesheet" href="${origin}/style.css">
  <style>@import url("${origin}/import.css"); @font-face { font-family: Remote; src: url("${origin}/font.woff2"); }
    .bg { background-image: url("${origin}/background.png"); font-family: Remote; }</style>
  <img src="${origin}/x.png" alt="">
  <iframe src="${origin}/frame.html"></iframe>
  <p class="bg">injected markup</p>`;

const template = handlebarsTemplate();
const noStore = { get: async () => null, put: async () => undefined };
const source = { document: async () => printable(), workspace: async () => workspace(), logo: async () => null };
const documentHtml = () => new Pdfs({ source, template, renderer: pool, store: noStore }).html(renderInput({ account_id: 1, livemode: true }, printable(), workspace(), template.version));

describe('Chromium blocks every request but data:', () => {
  it('the same markup in a plain browser does reach the test server (the control)', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      await page.setContent(`<html><body>${external()}</body></html>`, { waitUntil: 'load' });
    } finally {
      await browser.close();
    }
    expect(hits.length).toBeGreaterThan(0);
  });

  it('external image, stylesheet, @import, font, background and iframe: 0 requests, the PDF renders', async () => {
    // No CSP in this page: only the request blocking stands between it and the server.
    const pdf = await pool.render(`<html><body><h1>Blocked</h1>${external()}<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt=""></body></html>`);
    expect(hits).toEqual([]);
    expect(await pdfText(pdf)).toContain('injected markup');
    // Each refusal is reported (a warning and the pdf_render blocked_request counter in the pool).
    expect(blocked.length).toBeGreaterThan(0);
    expect(blocked.every((url) => url.startsWith(origin))).toBe(true);
  });
});

describe('the document template carries a Content-Security-Policy', () => {
  it('the rendered HTML has the CSP meta before any content', async () => {
    const html = await documentHtml();
    expect(html).toContain(CSP);
    expect(html.indexOf(CSP)).toBeLessThan(html.indexOf('<style>'));
  });

  it('markup injected into the document makes no request and the PDF still renders', async () => {
    const html = (await documentHtml()).replace('<body>', `<body>${external()}`);
    const pdf = await pool.render(html);
    expect(hits).toEqual([]);
    const text = await pdfText(pdf);
    expect(text).toContain('injected markup');
    expect(text).toContain('Faktura');
  });

  it('prints the same document with the CSP as without it: same text and fonts, same pixels, the QR image loaded', async () => {
    const withCsp = await documentHtml();
    const withoutCsp = withCsp.replace(CSP, '');
    expect(withoutCsp).not.toContain('Content-Security-Policy');
    const [a, b] = [await pool.render(withCsp), await pool.render(withoutCsp)];
    expect(await pdfText(a)).toBe(await pdfText(b));
    expect(embeddedFonts(a)).toEqual(embeddedFonts(b));
    // What the page looks like (the PDF's bytes differ by their creation date): pixel for pixel the same,
    // and the payment QR code, a data: image, is loaded under the policy.
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const look = async (html: string) => {
        await page.setContent(html, { waitUntil: 'load' });
        return { shot: await page.screenshot({ fullPage: true }), qrWidth: await page.locator('.qr img').evaluate((img) => (img as { naturalWidth: number }).naturalWidth) };
      };
      const [strict, open] = [await look(withCsp), await look(withoutCsp)];
      expect(strict.qrWidth).toBeGreaterThan(0);
      expect(strict.shot.equals(open.shot)).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
