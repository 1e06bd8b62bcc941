// The PdfRenderer port over Chromium (playwright-core): one browser, a warm pool of pages reused with
// setContent (opening a page costs 0.2–0.5 s; a warm render ~0.1 s), a bounded queue, and a timeout
// on every render. Each page has a browser context of its own, hence a renderer process of its own:
// a page that hangs is discarded alone. A crashed browser is relaunched at once and the render that
// met the crash is retried once on the new one; if no new page can be opened the browser is replaced.
// Every failure is a 503-class DomainError with a Retry-After, never a hang. Playwright itself runs in
// a worker thread (chromium-worker.ts: its async hooks stay off the thread that serves requests).
import { DomainError, fail } from '../../shared/errors';
import { Logger } from '../../shared/logger';
import { workQueueEvents, workQueueMetrics } from '../../shared/observability/work-queue';
import { PdfRenderer } from '../ports/pdf-renderer';
import { ChromiumDriver, DriverBrowser as Browser, DriverContext as BrowserContext, DriverPage as Page, workerChromiumDriver } from './chromium-worker';

export interface ChromiumPoolOptions {
  executablePath: string;
  /** Warm pages, i.e. concurrent renders. */
  poolSize: number;
  /** Per render (and per page opening); a queued render waits at most as long again. */
  timeoutMs: number;
  /** Renders waiting for a page beyond this → renderer_overloaded. */
  queueMax: number;
  log: Logger;
  /** Documents never need scripts; tests of a hung page enable them. */
  javaScriptEnabled?: boolean;
  /** After a failed launch, renders answer renderer_unavailable for this long before the next try. */
  relaunchBackoffMs?: number;
  /** Default: Playwright in a worker thread of the pool's own. */
  driver?: ChromiumDriver;
}

interface Slot {
  context: BrowserContext;
  page: Page;
  generation: number;
}

interface Waiter {
  resolve(slot: Slot): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

class RenderTimeout extends Error {}
class BrowserCrashed extends Error {}

const failed = () => fail.unavailable('render_failed', 'the PDF renderer failed; retry later', 1);

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new RenderTimeout(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const LAUNCH_ARGS = ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--font-render-hinting=none', '--disable-extensions'];

export class ChromiumPool implements PdfRenderer {
  private browser: Browser | null = null;
  /** Bumped whenever the browser is replaced: pages of an older generation are never reused. */
  private generation = 0;
  private launching: Promise<void> | null = null;
  private lastLaunchFailure: { at: number; message: string } | null = null;
  private readonly idle: Slot[] = [];
  /** Pages open or being opened, busy or idle, of any generation. */
  private slots = 0;
  private readonly waiters: Waiter[] = [];
  private closed = false;
  private launches = 0;
  /** Queue `pdf_render`: waiting = renders queued for a page, running = pages busy (or opening). */
  private readonly metrics = workQueueMetrics('pdf_render', () => ({ waiting: this.waiters.length, running: this.slots - this.idle.length }));

  private readonly driver: ChromiumDriver;

  constructor(private readonly options: ChromiumPoolOptions) {
    this.driver = options.driver ?? workerChromiumDriver();
  }

  /** Launches the browser and warms the pool in the background; a missing Chromium is only logged. */
  start(): void {
    void this.warm().catch((err: unknown) => {
      this.options.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'PDF renderer unavailable; PDF requests answer 503 renderer_unavailable');
    });
  }

  async warm(): Promise<void> {
    await this.ensureBrowser();
    const opening: Promise<void>[] = [];
    while (this.slots < this.options.poolSize) {
      this.slots++;
      opening.push(
        this.openSlot().then(
          (slot) => this.release(slot, true),
          () => {
            this.slots--;
          },
        ),
      );
    }
    await Promise.all(opening);
  }

  async render(html: string): Promise<Buffer> {
    try {
      return await this.renderOnce(html);
    } catch (err) {
      // The browser died under this render (not a timeout): once more, on a fresh browser.
      if (err instanceof BrowserCrashed) return this.renderOnce(html).catch(() => Promise.reject(failed()));
      throw err;
    }
  }

  private async renderOnce(html: string): Promise<Buffer> {
    if (this.closed) throw fail.unavailable('renderer_unavailable', 'the PDF renderer is shutting down', 5);
    const slot = await this.acquire();
    let healthy = false;
    const rendered = this.metrics.startJob();
    try {
      const pdf = await withTimeout(this.print(slot.page, html), this.options.timeoutMs);
      healthy = true;
      rendered('completed');
      return pdf;
    } catch (err) {
      const crashed = slot.generation !== this.generation || !this.browser?.isConnected();
      rendered(crashed ? 'crashed' : err instanceof RenderTimeout ? 'timed_out' : 'failed');
      if (crashed) throw new BrowserCrashed();
      if (err instanceof RenderTimeout) {
        this.options.log.warn({ timeout_ms: this.options.timeoutMs }, 'render timed out; discarding the page');
        throw fail.unavailable('render_timeout', `rendering took longer than ${this.options.timeoutMs} ms; retry later`, 2);
      }
      this.options.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'render failed');
      throw failed();
    } finally {
      this.release(slot, healthy);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(fail.unavailable('renderer_unavailable', 'the PDF renderer is shutting down', 5));
    }
    const browser = this.browser;
    this.browser = null;
    this.idle.length = 0;
    if (browser) await withTimeout(browser.close(), 5_000).catch(() => undefined);
    await this.driver.close();
  }

  /** Tests: the pool's state. */
  stats() {
    return { slots: this.slots, idle: this.idle.length, waiting: this.waiters.length, generation: this.generation, connected: !!this.browser?.isConnected() };
  }

  private async print(page: Page, html: string): Promise<Buffer> {
    await page.setContent(html, { waitUntil: 'load', timeout: this.options.timeoutMs });
    return page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true });
  }

  private async acquire(): Promise<Slot> {
    const idle = this.idle.pop();
    if (idle && idle.generation === this.generation && this.browser?.isConnected()) return idle;
    if (idle) this.release(idle, false);
    if (this.slots < this.options.poolSize) {
      this.slots++;
      try {
        return await this.openSlot();
      } catch (err) {
        this.slots--;
        throw err;
      }
    }
    if (this.waiters.length >= this.options.queueMax) {
      workQueueEvents().labels('pdf_render', 'rejected').inc();
      throw fail.unavailable('renderer_overloaded', 'too many PDFs are being rendered; retry later', 1);
    }
    return new Promise<Slot>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          reject(fail.unavailable('renderer_overloaded', 'too many PDFs are being rendered; retry later', 2));
        }, this.options.timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  private release(slot: Slot, healthy: boolean): void {
    if (healthy && !this.closed && slot.generation === this.generation && this.browser?.isConnected()) {
      const waiter = this.waiters.shift();
      if (waiter) {
        clearTimeout(waiter.timer);
        waiter.resolve(slot);
      } else this.idle.push(slot);
      return;
    }
    // A hung page's close may never settle: not awaited. Its context goes with it (and its renderer).
    void withTimeout(slot.context.close(), this.options.timeoutMs).catch(() => undefined);
    this.slots--;
    const waiter = this.waiters.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      this.slots++;
      this.openSlot().then(waiter.resolve, (err: unknown) => {
        this.slots--;
        waiter.reject(err);
      });
    }
  }

  private async openSlot(): Promise<Slot> {
    await this.ensureBrowser();
    const generation = this.generation;
    const browser = this.browser!;
    try {
      const context = await withTimeout(browser.newContext({ javaScriptEnabled: this.options.javaScriptEnabled ?? false }), this.options.timeoutMs);
      const page = await withTimeout(context.newPage(), this.options.timeoutMs);
      return { context, page, generation };
    } catch (err) {
      // A browser that cannot open a page is hung or dead: replace it.
      this.options.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not open a page; replacing the browser');
      this.replace(generation);
      throw fail.unavailable('render_failed', 'the PDF renderer failed; retry later', 1);
    }
  }

  private ensureBrowser(): Promise<void> {
    if (this.browser?.isConnected()) return Promise.resolve();
    if (this.launching) return this.launching;
    const backoff = this.options.relaunchBackoffMs ?? 5_000;
    const failure = this.lastLaunchFailure;
    if (failure && Date.now() - failure.at < backoff) {
      return Promise.reject(this.unavailable(failure.message, Math.ceil((failure.at + backoff - Date.now()) / 1000)));
    }
    this.launching = (async () => {
      try {
        const browser = await this.driver.launch({ executablePath: this.options.executablePath, args: LAUNCH_ARGS, timeout: 30_000 });
        this.generation++;
        // Every launch after the first replaces a browser that crashed, hung or exited.
        if (this.launches++ > 0) workQueueEvents().labels('pdf_render', 'restart').inc();
        browser.on('disconnected', () => this.onDisconnected(browser));
        this.browser = browser;
        this.lastLaunchFailure = null;
        this.options.log.info({ executable: this.options.executablePath, pool_size: this.options.poolSize }, 'PDF renderer ready');
      } catch (err) {
        const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
        this.lastLaunchFailure = { at: Date.now(), message };
        this.options.log.warn({ executable: this.options.executablePath, reason: message }, 'Chromium could not be started (install it with scripts/engines.sh or set CHROMIUM_PATH)');
        throw this.unavailable(message, Math.ceil(backoff / 1000));
      } finally {
        this.launching = null;
      }
    })();
    return this.launching;
  }

  /** The reason (and the path tried) goes to the log when the launch fails, not to API clients. */
  private unavailable(_reason: string, retryAfterSeconds: number): DomainError {
    return fail.unavailable('renderer_unavailable', 'PDF rendering is temporarily unavailable; retry later', Math.max(1, retryAfterSeconds));
  }

  private onDisconnected(browser: Browser): void {
    if (this.browser !== browser) return;
    this.options.log.warn('Chromium exited; it is relaunched on the next render');
    this.forget();
  }

  /** Drops the current browser (its idle pages with it); busy pages are discarded when released. */
  private forget(): void {
    this.browser = null;
    this.generation++;
    this.slots -= this.idle.length;
    this.idle.length = 0;
  }

  private replace(generation: number): void {
    if (generation !== this.generation || !this.browser) return;
    const browser = this.browser;
    this.forget();
    void withTimeout(browser.close(), 5_000).catch(() => this.options.log.error('a hung Chromium did not close'));
  }
}
