// The PdfRenderer port over Chromium (playwright-core): one browser, a warm pool of pages reused with
// setContent (opening a page costs 0.2–0.5 s; a warm render ~0.1 s), a bounded queue, and a timeout
// on every render. Each page has a browser context of its own, hence a renderer process of its own:
// a page that hangs is discarded alone. A crashed browser is relaunched at once and the render that
// met the crash is retried once on the new one; if no new page can be opened the browser is replaced.
// Every failure is a 503-class DomainError with a Retry-After, never a hang. Playwright itself runs in
// a worker thread (chromium-worker.ts: its async hooks stay off the thread that serves requests), and
// there every request but data: is aborted.
// Pages are shared fairly between workspaces (services/shared/fair-lanes.ts): renders wait in one lane
// per workspace, lanes are taken in turn, a workspace runs at most `workspaceConcurrency` renders and
// queues at most `workspaceQueueMax`; pre-renders yield to downloads (docs/rendering.md).
import { existsSync } from 'node:fs';
import { DomainError, fail } from '../../shared/errors';
import { FairLanes } from '../../shared/fair-lanes';
import { Logger } from '../../shared/logger';
import { workQueueEvents, workQueueMetrics } from '../../shared/observability/work-queue';
import { PdfRenderer, RenderJob } from '../ports/pdf-renderer';
import { ChromiumDriver, DriverBrowser as Browser, DriverContext as BrowserContext, DriverPage as Page, workerChromiumDriver } from './chromium-worker';

export interface ChromiumPoolOptions {
  executablePath: string;
  /** Warm pages, i.e. concurrent renders. */
  poolSize: number;
  /** Per render (and per page opening); a queued render waits at most as long again. */
  timeoutMs: number;
  /** Renders waiting for a page, all workspaces together, beyond this → renderer_overloaded. */
  queueMax: number;
  /** Renders of one workspace at once (default: poolSize − 1, at least 1: a page is left for the others). */
  workspaceConcurrency?: number;
  /** Renders of one workspace waiting for a page (default 8) beyond this → renderer_overloaded. */
  workspaceQueueMax?: number;
  log: Logger;
  /** Documents never need scripts; tests of a hung page enable them. */
  javaScriptEnabled?: boolean;
  /** After a failed launch, renders answer renderer_unavailable for this long before the next try. */
  relaunchBackoffMs?: number;
  /** Default: Playwright in a worker thread of the pool's own. */
  driver?: ChromiumDriver;
  /**
   * TEST ONLY (RENDER_TEST_HOLD_FILE, refused in production): while this file exists no render starts;
   * renders queue in their lanes and start, in their workspaces' turn, once it is removed. It lets the
   * black-box suite build a backlog deterministically instead of racing Chromium's speed.
   */
  testHoldFile?: string;
}

interface Slot {
  context: BrowserContext;
  page: Page;
  generation: number;
}

interface Waiter {
  job: RenderJob | undefined;
  resolve(slot: Slot): void;
  reject(err: unknown): void;
  timer?: NodeJS.Timeout;
}

/** The fair-sharing lane of a render: its workspace (live and sandbox share it: one customer). */
const laneOf = (job: RenderJob | undefined) => (job ? `workspace:${job.tenant.account_id}` : 'unattributed');

export const DEFAULT_WORKSPACE_QUEUE_MAX = 8;
export const defaultWorkspaceConcurrency = (poolSize: number) => Math.max(1, poolSize - 1);

class RenderTimeout extends Error {}
class BrowserCrashed extends Error {}

const failed = () => fail.unavailable('render_failed', 'the PDF renderer failed; retry later', 1);
const overloaded = (retryAfterSeconds: number) => fail.unavailable('renderer_overloaded', 'too many PDFs are being rendered; retry later', retryAfterSeconds);
const workspaceOverloaded = () => fail.unavailable('renderer_overloaded', 'too many PDFs of this workspace are being rendered; retry later', 1);
const shuttingDown = () => fail.unavailable('renderer_unavailable', 'the PDF renderer is shutting down', 5);

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
  /** Renders waiting for a page, per workspace; which one gets the next free page. */
  private readonly lanes: FairLanes<Waiter>;
  private closed = false;
  private launches = 0;
  /** Queue `pdf_render`: waiting = renders queued for a page, running = pages busy (or opening). */
  private readonly metrics = workQueueMetrics('pdf_render', () => ({ waiting: this.lanes.waiting(), running: this.slots - this.idle.length }));

  private readonly driver: ChromiumDriver;

  constructor(private readonly options: ChromiumPoolOptions) {
    this.driver = options.driver ?? workerChromiumDriver({ onBlocked: (url) => this.blocked(url) });
    this.lanes = new FairLanes<Waiter>(
      {
        laneConcurrency: options.workspaceConcurrency ?? defaultWorkspaceConcurrency(options.poolSize),
        laneQueueMax: options.workspaceQueueMax ?? DEFAULT_WORKSPACE_QUEUE_MAX,
        queueMax: options.queueMax,
      },
      (waiter) => waiter.job?.background === true,
    );
    // The test hold's release is noticed by polling (tests only: no file, no timer).
    if (options.testHoldFile) setInterval(() => this.dispatch(), 50).unref();
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
          (slot) => this.shelve(slot, true),
          () => {
            this.slots--;
            this.dispatch();
          },
        ),
      );
    }
    await Promise.all(opening);
  }

  async render(html: string, job?: RenderJob): Promise<Buffer> {
    try {
      return await this.renderOnce(html, job);
    } catch (err) {
      // The browser died under this render (not a timeout): once more, on a fresh browser.
      if (err instanceof BrowserCrashed) return this.renderOnce(html, job).catch(() => Promise.reject(failed()));
      throw err;
    }
  }

  private async renderOnce(html: string, job: RenderJob | undefined): Promise<Buffer> {
    if (this.closed) throw shuttingDown();
    const lane = laneOf(job);
    const slot = await this.acquire(lane, job);
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
      this.lanes.done(lane);
      this.shelve(slot, healthy);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.lanes.drain()) {
      clearTimeout(waiter.timer);
      waiter.reject(shuttingDown());
    }
    const browser = this.browser;
    this.browser = null;
    this.idle.length = 0;
    if (browser) await withTimeout(browser.close(), 5_000).catch(() => undefined);
    await this.driver.close();
  }

  /** Tests: the pool's state. */
  stats() {
    return { slots: this.slots, idle: this.idle.length, waiting: this.lanes.waiting(), generation: this.generation, connected: !!this.browser?.isConnected() };
  }

  private async print(page: Page, html: string): Promise<Buffer> {
    // The render's own timer (timeoutMs, renderOnce) decides: Playwright's timeout is only a backstop a
    // second later. At the same value the two raced, and Playwright's TimeoutError, which crosses the
    // worker as a plain error, was answered render_failed instead of render_timeout.
    await page.setContent(html, { waitUntil: 'load', timeout: this.options.timeoutMs + 1_000 });
    return page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true });
  }

  /**
   * A page for a render of `lane`: at once when a page is free and the workspace is under its cap, else
   * after waiting its turn (at most timeoutMs); refused at once when its workspace's queue or the whole
   * queue is full — a retryable 503 well inside the gateway's deadline, never a wait past it.
   */
  private acquire(lane: string, job: RenderJob | undefined): Promise<Slot> {
    return new Promise<Slot>((resolve, reject) => {
      const waiter: Waiter = { job, resolve, reject };
      const offer = this.lanes.offer(lane, waiter, this.pageFree());
      if (offer === 'start') return this.hand(lane, waiter);
      if (offer === 'queued') {
        waiter.timer = setTimeout(() => {
          if (this.lanes.withdraw(lane, waiter)) reject(overloaded(2));
        }, this.options.timeoutMs);
        return;
      }
      workQueueEvents().labels('pdf_render', offer === 'lane_full' ? 'rejected_workspace' : 'rejected').inc();
      reject(offer === 'lane_full' ? workspaceOverloaded() : overloaded(1));
    });
  }

  /** A page may be taken now: an idle one, or room to open one. */
  private pageFree(): boolean {
    if (this.options.testHoldFile && existsSync(this.options.testHoldFile)) return false;
    return !this.closed && (this.idle.length > 0 || this.slots < this.options.poolSize);
  }

  /** Gives a page to a render already counted as running in its lane (an idle page, else a new one). */
  private hand(lane: string, waiter: Waiter): void {
    clearTimeout(waiter.timer);
    let slot = this.idle.pop();
    while (slot && (slot.generation !== this.generation || !this.browser?.isConnected())) {
      this.discard(slot);
      slot = this.idle.pop();
    }
    if (slot) return waiter.resolve(slot);
    this.slots++;
    this.openSlot().then(waiter.resolve, (err: unknown) => {
      this.slots--;
      this.lanes.done(lane);
      waiter.reject(err);
      this.dispatch();
    });
  }

  /** Starts waiting renders, in their workspaces' turn, while pages are free. */
  private dispatch(): void {
    while (this.pageFree()) {
      const next = this.lanes.next();
      if (!next) return;
      this.hand(next.lane, next.item);
    }
  }

  /** A page back from a render (or newly opened): kept when healthy, else closed; then the next render. */
  private shelve(slot: Slot, healthy: boolean): void {
    if (healthy && !this.closed && slot.generation === this.generation && this.browser?.isConnected()) this.idle.push(slot);
    else this.discard(slot);
    this.dispatch();
  }

  private discard(slot: Slot): void {
    // A hung page's close may never settle: not awaited. Its context goes with it (and its renderer).
    void withTimeout(slot.context.close(), this.options.timeoutMs).catch(() => undefined);
    this.slots--;
  }

  /** Chromium refused a request (chromium-worker.ts): markup that names a URL reached a page. */
  private blocked(url: string): void {
    workQueueEvents().labels('pdf_render', 'blocked_request').inc();
    let origin = 'unparsable URL';
    try {
      origin = new URL(url).origin;
    } catch {
      // keep the placeholder: the URL itself may carry data and is never logged
    }
    this.options.log.warn({ origin }, 'a page asked Chromium for a resource that is not a data: URL; blocked');
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
