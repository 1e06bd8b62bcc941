// Playwright driven from a worker thread. playwright-core runs every API call inside an
// AsyncLocalStorage (its "zones"); on Node 20 the first such call installs async hooks for the whole
// thread, for good, and from then on every promise and every socket, timer and HTTP/2 stream of the
// thread pays for them. In the embedded process that thread is also the gateway's and every service's:
// measured, the hooks cost a 304 about 10 % of its CPU (docs/rendering.md, "Benchmark"). In a worker
// the hooks stay in the worker, and so does Playwright's protocol traffic (the PDF arrives base64-coded
// over Chromium's pipe and is decoded there); a PDF crosses back as a transferred buffer, no copy.
//
// The worker holds the real Browser, BrowserContext and Page objects by id; the main thread gets
// stand-ins with the few methods the pool uses. Answers and the `disconnected` event are posted in the
// order the worker sees them, so a render that fails because Chromium died is answered after the
// browser's `disconnected` — the pool tells a crash from a failure exactly as with Playwright in-thread.
// The worker's code is this file's `serve` function, passed as source (eval), so it runs alike from
// dist/ and from the TypeScript sources under jest; it must reference nothing but its parameters.
//
// Every browser context it opens aborts every request whose URL is not data: (nor the page's own
// about:blank) before it leaves Chromium: documents are self-contained (images are data: URIs, fonts
// are system fonts), so a URL in a page can only be markup that should never have reached a template.
// The main thread hears of each refusal (`onBlocked`). The templates' CSP is the second line.
import { Worker } from 'node:worker_threads';

/** What ChromiumPool uses of Playwright's Browser, BrowserContext and Page. */
export interface DriverPage {
  setContent(html: string, options: { waitUntil: 'load'; timeout: number }): Promise<void>;
  pdf(options: { format: string; printBackground: boolean; preferCSSPageSize: boolean }): Promise<Buffer>;
}
export interface DriverContext {
  newPage(): Promise<DriverPage>;
  close(): Promise<void>;
}
export interface DriverBrowser {
  isConnected(): boolean;
  on(event: 'disconnected', listener: () => void): void;
  newContext(options: { javaScriptEnabled: boolean }): Promise<DriverContext>;
  close(): Promise<void>;
}
export interface ChromiumDriver {
  launch(options: { executablePath: string; args: string[]; timeout: number }): Promise<DriverBrowser>;
  /** Ends the driver (its worker); browsers still open are closed with it. */
  close(): Promise<void>;
}

type Request = { id: number; op: string; target?: number; args?: unknown };
type Answer = { id: number; result?: unknown; error?: string } | { event: 'disconnected'; target: number } | { event: 'blocked'; url: string };

export interface ChromiumDriverOptions {
  /** Called with the URL of every request a page made and Chromium aborted (not data:). */
  onBlocked?: (url: string) => void;
}

/** The worker's side (runs in the worker, from source: nothing but its parameters in scope). */
function serve(load: () => { chromium: { launch(options: unknown): Promise<any> } }, port: { on(e: 'message', f: (m: Request) => void): void; postMessage(m: Answer, transfer?: ArrayBuffer[]): void }) {
  const objects = new Map<number, any>(); // eslint-disable-line @typescript-eslint/no-explicit-any
  let nextId = 1;
  const keep = (object: unknown) => {
    const id = nextId++;
    objects.set(id, object);
    return id;
  };
  const ops: Record<string, (target: any, args: any) => Promise<unknown>> = { // eslint-disable-line @typescript-eslint/no-explicit-any
    launch: async (_target, args) => {
      const browser = await load().chromium.launch(args);
      const id = keep(browser);
      browser.on('disconnected', () => {
        objects.delete(id);
        port.postMessage({ event: 'disconnected', target: id });
      });
      return id;
    },
    newContext: async (browser, args) => {
      const context = await browser.newContext(args);
      // Only data: URLs load (and the blank page a new page starts as); the rest is aborted in Chromium.
      await context.route(
        () => true,
        (route: any) => { // eslint-disable-line @typescript-eslint/no-explicit-any
          const url: string = route.request().url();
          if (url.startsWith('data:') || url === 'about:blank') return route.continue().catch(() => undefined);
          port.postMessage({ event: 'blocked', url: url.slice(0, 2048) });
          return route.abort('blockedbyclient').catch(() => undefined);
        },
      );
      return keep(context);
    },
    newPage: async (context) => keep(await context.newPage()),
    setContent: async (page, args) => {
      await page.setContent(args.html, args.options);
    },
    pdf: async (page, args) => page.pdf(args),
    closeContext: async (context) => context.close(),
    closeBrowser: async (browser) => browser.close(),
  };
  port.on('message', (request) => {
    const target = request.target === undefined ? undefined : objects.get(request.target);
    const run = request.target !== undefined && !target ? Promise.reject(new Error('Target page, context or browser has been closed')) : ops[request.op](target, request.args);
    run.then(
      (result) => {
        if (request.op === 'closeContext' || request.op === 'closeBrowser') objects.delete(request.target!);
        if (result instanceof Uint8Array) {
          // A copy of exactly the PDF's bytes, moved (not copied again) to the main thread.
          const bytes = new Uint8Array(result);
          port.postMessage({ id: request.id, result: bytes }, [bytes.buffer]);
        } else port.postMessage({ id: request.id, result });
      },
      (err: unknown) => port.postMessage({ id: request.id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

/** Playwright in a worker thread of its own, started on the first launch, ended by close(). */
export function workerChromiumDriver(options: ChromiumDriverOptions = {}): ChromiumDriver {
  let worker: Worker | null = null;
  let nextId = 1;
  const pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  const browsers = new Map<number, { connected: boolean; listeners: Array<() => void> }>();

  const disconnected = (id: number) => {
    const browser = browsers.get(id);
    if (!browser || !browser.connected) return;
    browser.connected = false;
    for (const listener of browser.listeners) listener();
  };
  /** The worker is gone (ended or failed): every call in flight fails, every browser is disconnected. */
  const lost = (reason: string) => {
    worker = null;
    for (const [id, call] of pending) {
      pending.delete(id);
      call.reject(new Error(reason));
    }
    for (const id of [...browsers.keys()]) disconnected(id);
  };
  const started = () => {
    if (worker) return worker;
    const playwright = require.resolve('playwright-core');
    const source = `const { parentPort } = require('node:worker_threads');\n(${serve.toString()})(() => require(${JSON.stringify(playwright)}), parentPort);`;
    const w = new Worker(source, { eval: true });
    // The worker never keeps the process alive: close() ends it, and Chromium exits with its pipe.
    w.unref();
    w.on('message', (answer: Answer) => {
      if ('event' in answer) return answer.event === 'blocked' ? options.onBlocked?.(answer.url) : disconnected(answer.target);
      const call = pending.get(answer.id);
      if (!call) return;
      pending.delete(answer.id);
      if (answer.error !== undefined) call.reject(new Error(answer.error));
      else call.resolve(answer.result);
    });
    w.on('error', (err) => lost(`the Chromium driver failed: ${err.message}`));
    w.on('exit', () => {
      if (worker === w) lost('the Chromium driver ended');
    });
    worker = w;
    return w;
  };
  const call = <T>(op: string, target?: number, args?: unknown): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      started().postMessage({ id, op, target, args } satisfies Request);
    });

  const page = (id: number): DriverPage => ({
    setContent: (html, options) => call('setContent', id, { html, options }),
    pdf: async (options) => {
      const bytes = await call<Uint8Array>('pdf', id, options);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  });
  const context = (id: number): DriverContext => ({
    newPage: async () => page(await call<number>('newPage', id)),
    close: () => call('closeContext', id),
  });
  return {
    async launch(options) {
      const id = await call<number>('launch', undefined, options);
      const state = { connected: true, listeners: [] as Array<() => void> };
      browsers.set(id, state);
      return {
        isConnected: () => state.connected,
        on: (_event, listener) => void state.listeners.push(listener),
        newContext: async (contextOptions) => context(await call<number>('newContext', id, contextOptions)),
        close: async () => {
          await call('closeBrowser', id);
          disconnected(id);
        },
      };
    },
    async close() {
      const w = worker;
      worker = null;
      if (w) await w.terminate();
      lost('the Chromium driver was closed');
    },
  };
}
