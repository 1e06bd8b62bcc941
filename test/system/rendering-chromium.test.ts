// The Chromium renderer (docs/rendering.md) against a real Chromium: a full document rendered through
// the handlebars template, its text with every diacritic and the font embedded; the payment QR read
// back from the rendered page; a crashed browser replaced, a hung page timed out and discarded, an
// overloaded queue refused, a missing Chromium reported — each a 503-class error, never a hang.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import jsQR from 'jsqr';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';
import { ChromiumPool, ChromiumPoolOptions } from '../../services/rendering/adapters/chromium-pool';
import { handlebarsTemplate } from '../../services/rendering/adapters/handlebars-template';
import { Pdfs } from '../../services/rendering/domain/pdfs';
import { renderInput } from '../../services/rendering/domain/render-input';
import { DomainError } from '../../services/shared/errors';
import { createLogger } from '../../services/shared/logger';
import { embeddedFonts, pdfText } from '../support/pdf';
import { printable, supplier, workspace } from '../unit/rendering.fixtures';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const log = createLogger('test');
const pools: ChromiumPool[] = [];
const pool = (options: Partial<ChromiumPoolOptions> = {}) => {
  const p = new ChromiumPool({ executablePath: CHROMIUM, poolSize: 1, timeoutMs: 10_000, queueMax: 4, log, ...options });
  pools.push(p);
  return p;
};
afterAll(async () => {
  for (const p of pools) await p.close();
});

const tenant = { account_id: 1, livemode: true };
const template = handlebarsTemplate();
const noStore = { get: async () => null, put: async () => undefined };
const source = { document: async () => printable(), workspace: async () => workspace(), logo: async () => null };
const pdfsWith = (renderer: ChromiumPool) => new Pdfs({ source, template, renderer, store: noStore });

const code = async (promise: Promise<unknown>) => {
  try {
    await promise;
    return 'no error';
  } catch (err) {
    return err instanceof DomainError ? `${err.kind}:${err.code}:${err.metadata.retry_after_seconds}` : String(err);
  }
};

describe('rendering a document with Chromium', () => {
  it('prints the Slovak document with every diacritic, DejaVu Sans embedded', async () => {
    const renderer = pool();
    const doc = printable({ pdf_language: 'sk', supplier: supplier('sk'), note: 'Příliš žluťoučký kůň úpěl ďábelské ódy; Größe, Ärger, Übermaß' });
    const pdf = await renderer.render(await pdfsWith(renderer).html(renderInput(tenant, doc, workspace(), template.version)));
    const text = await pdfText(pdf);
    for (const expected of ['Faktúra', 'Dodávateľ Žilina s.r.o.', 'Odberateľ', 'Dátum vystavenia 5. 3. 2026', 'K úhrade', 'Příliš žluťoučký kůň úpěl ďábelské ódy; Größe, Ärger, Übermaß']) {
      expect(text).toContain(expected);
    }
    expect(embeddedFonts(pdf).some((name) => name.includes('DejaVuSans'))).toBe(true);
  });

  it('the payment QR code on the rendered page decodes to the amount due, IBAN and variable symbol', async () => {
    const html = await pdfsWith(pool()).html(renderInput(tenant, printable(), workspace(), template.version));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ deviceScaleFactor: 2 });
      await page.setContent(html);
      const shot = PNG.sync.read(await page.locator('.qr img').screenshot());
      const qr = jsQR(new Uint8ClampedArray(shot.data), shot.width, shot.height);
      expect(qr?.data.startsWith('SPD*1.0*')).toBe(true);
      const fields = Object.fromEntries(qr!.data.split('*').slice(2).map((f) => [f.slice(0, f.indexOf(':')), f.slice(f.indexOf(':') + 1)]));
      // printable(): 15 131,05 total − 1 000,00 credited = 14 131,05 due.
      expect(fields).toMatchObject({ ACC: 'CZ6508000000192000145399+GIBACZPX', AM: '14131.05', CC: 'CZK', 'X-VS': '2026000007', MSG: '2026000007' });
    } finally {
      await browser.close();
    }
  });

  it('warm renders reuse the page: ten renders well under the time of opening pages', async () => {
    const renderer = pool();
    const html = await pdfsWith(renderer).html(renderInput(tenant, printable(), workspace(), template.version));
    await renderer.render(html);
    const started = Date.now();
    for (let i = 0; i < 10; i++) await renderer.render(html);
    expect(renderer.stats()).toMatchObject({ slots: 1, idle: 1 });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('renderer faults', () => {
  const chromiumChildren = () =>
    execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter(([pid, comm]) => pid && /chrom/i.test(comm ?? ''))
      .map(([pid]) => Number(pid));

  it('a crashed browser is replaced: the next render succeeds', async () => {
    const renderer = pool();
    await renderer.render('<p>before</p>');
    const before = chromiumChildren();
    expect(before.length).toBeGreaterThan(0);
    const generation = renderer.stats().generation;
    for (const pid of before) process.kill(pid, 'SIGKILL');
    expect(await pdfText(await renderer.render('<p>after the crash</p>'))).toContain('after the crash');
    expect(renderer.stats().generation).toBeGreaterThan(generation);
  });

  it('a hung page times out (503 render_timeout) and is discarded; the next render succeeds', async () => {
    const renderer = pool({ timeoutMs: 2_000, javaScriptEnabled: true });
    await renderer.render('<p>warm</p>');
    const started = Date.now();
    expect(await code(renderer.render('<script>for (;;) {}</script>'))).toBe('unavailable:render_timeout:2');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await pdfText(await renderer.render('<p>after the hang</p>'))).toContain('after the hang');
  });

  it('a full queue answers 503 renderer_overloaded at once instead of waiting', async () => {
    const renderer = pool({ queueMax: 1, javaScriptEnabled: true });
    await renderer.render('<p>warm</p>');
    const slow = '<script>const t = Date.now(); while (Date.now() - t < 1500) {}</script><p>slow</p>';
    const running = renderer.render(slow);
    const queued = renderer.render(slow);
    await new Promise((resolve) => setImmediate(resolve));
    const started = Date.now();
    expect(await code(renderer.render(slow))).toBe('unavailable:renderer_overloaded:1');
    expect(Date.now() - started).toBeLessThan(500);
    await Promise.all([running, queued]);
  });

  it('without Chromium: start() does not throw, renders answer 503 renderer_unavailable with a retry hint', async () => {
    const renderer = pool({ executablePath: '/nonexistent/chromium' });
    renderer.start();
    expect(await code(renderer.render('<p>x</p>'))).toMatch(/^unavailable:renderer_unavailable:\d+$/);
  });
});

describe('the Chromium driver runs in a worker thread', () => {
  // Playwright runs each call in an AsyncLocalStorage; on Node 20 that installs async hooks for the
  // whole thread for good, a cost on every promise of every request the thread serves afterwards.
  it('a render leaves the calling thread without async hooks (and without Playwright loaded)', () => {
    const pool = path.resolve(__dirname, '../../dist/services/rendering/adapters/chromium-pool.js');
    const script = `
      const hooks = require('internal/async_hooks');
      const { ChromiumPool } = require(${JSON.stringify(pool)});
      const log = { info() {}, warn() {}, error() {}, child() { return log; } };
      const pool = new ChromiumPool({ executablePath: ${JSON.stringify(CHROMIUM)}, poolSize: 1, timeoutMs: 30000, queueMax: 4, log });
      pool.render('<p>from the worker</p>').then(async (pdf) => {
        const loaded = Object.keys(require.cache).some((file) => file.includes('playwright-core'));
        process.stdout.write(JSON.stringify({ pdf: pdf.subarray(0, 5).toString(), hooks: hooks.initHooksExist(), playwright: loaded }));
        await pool.close();
      });`;
    const out = execFileSync(process.execPath, ['--expose-internals', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(JSON.parse(out)).toEqual({ pdf: '%PDF-', hooks: false, playwright: false });
  });
});
