// Fair sharing of the Chromium pool between workspaces (docs/rendering.md "Fair sharing of the
// renderer"), on a scripted driver: every render holds its page until the test lets it finish, so the
// order in which renders get a page is observed exactly, with latches rather than time.
import { ChromiumPool, ChromiumPoolOptions } from '../../services/rendering/adapters/chromium-pool';
import { ChromiumDriver, DriverPage } from '../../services/rendering/adapters/chromium-worker';
import { Pdfs } from '../../services/rendering/domain/pdfs';
import { RenderJob } from '../../services/rendering/ports/pdf-renderer';
import { DomainError } from '../../services/shared/errors';
import { createLogger } from '../../services/shared/logger';
import { printable, workspace } from './rendering.fixtures';

/** A driver whose pages print only when told: `started` lists the HTML of each render given a page. */
function scriptedDriver() {
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const watchers: Array<{ count: number; resolve(): void }> = [];
  const page = (): DriverPage => {
    let html = '';
    return {
      setContent: async (content) => {
        html = content;
      },
      pdf: () =>
        new Promise<Buffer>((resolve) => {
          const printing = html;
          finishers.set(printing, () => resolve(Buffer.from(`%PDF ${printing}`)));
          started.push(printing);
          for (const watcher of watchers.filter((w) => started.length >= w.count)) {
            watchers.splice(watchers.indexOf(watcher), 1);
            watcher.resolve();
          }
        }),
    };
  };
  const driver: ChromiumDriver = {
    launch: async () => ({
      isConnected: () => true,
      on: () => undefined,
      newContext: async () => ({ newPage: async () => page(), close: async () => undefined }),
      close: async () => undefined,
    }),
    close: async () => undefined,
  };
  return {
    driver,
    started,
    /** Resolves once `count` renders have been given a page. */
    startedCount: (count: number) => (started.length >= count ? Promise.resolve() : new Promise<void>((resolve) => watchers.push({ count, resolve }))),
    finish: (html: string) => {
      const finisher = finishers.get(html);
      if (!finisher) throw new Error(`${html} is not printing`);
      finishers.delete(html);
      finisher();
    },
  };
}

const pools: ChromiumPool[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

async function warmPool(options: Partial<ChromiumPoolOptions> = {}) {
  const script = scriptedDriver();
  const pool = new ChromiumPool({ executablePath: 'chromium', poolSize: 1, timeoutMs: 60_000, queueMax: 32, log: createLogger('test'), driver: script.driver, ...options });
  pools.push(pool);
  await pool.warm();
  /** pool.render; a render still waiting when a failed test closes the pool fails quietly. */
  const render = (html: string, job: RenderJob) => {
    const pdf = pool.render(html, job);
    pdf.catch(() => undefined);
    return pdf;
  };
  return { pool, render, ...script };
}

const of = (account_id: number, background = false): RenderJob => ({ tenant: { account_id, livemode: true }, background });
const A = of(1);
const B = of(2);

const refusal = async (promise: Promise<unknown>) => {
  try {
    await promise;
    return 'no error';
  } catch (err) {
    return err instanceof DomainError ? `${err.kind}:${err.code}:${err.metadata.retry_after_seconds}: ${err.message}` : String(err);
  }
};

describe('renderer: one workspace backlog, another workspace arrives', () => {
  it("the other workspace's first render is the next one given a page", async () => {
    const { pool, render, started, startedCount, finish } = await warmPool({ poolSize: 1, workspaceQueueMax: 32 });
    const backlog = Array.from({ length: 10 }, (_, i) => render(`a${i}`, A));
    await startedCount(1);
    const first = render('b0', B);
    expect(pool.stats().waiting).toBe(10);
    finish('a0');
    await startedCount(2);
    expect(started).toEqual(['a0', 'b0']);
    finish('b0');
    await first;
    await startedCount(3);
    expect(started[2]).toBe('a1');
    for (let i = 1; i < 10; i++) {
      await startedCount(i + 2);
      finish(`a${i}`);
    }
    await Promise.all(backlog);
  });

  it('two backlogs alternate', async () => {
    const { render, started, startedCount, finish } = await warmPool({ poolSize: 1 });
    const renders = [render('a0', A), render('a1', A), render('a2', A), render('b0', B), render('b1', B)];
    for (let i = 0; i < renders.length; i++) {
      await startedCount(i + 1);
      finish(started[i]);
    }
    await Promise.all(renders);
    expect(started).toEqual(['a0', 'b0', 'a1', 'b1', 'a2']);
  });

  it('by default a workspace leaves a page for the others: their first render starts at once', async () => {
    const { render, started, startedCount, finish } = await warmPool({ poolSize: 2 });
    const backlog = Array.from({ length: 5 }, (_, i) => render(`a${i}`, A));
    await startedCount(1);
    const first = render('b0', B);
    await startedCount(2);
    expect(started).toEqual(['a0', 'b0']);
    finish('b0');
    await first;
    for (let i = 0; i < 5; i++) {
      await startedCount(i + 2);
      finish(`a${i}`);
    }
    await Promise.all(backlog);
  });
});

describe('renderer: per-workspace concurrency cap', () => {
  it('a workspace runs at most workspaceConcurrency renders, even with pages free', async () => {
    const { pool, render, started, startedCount, finish } = await warmPool({ poolSize: 3, workspaceConcurrency: 2 });
    const renders = ['a0', 'a1', 'a2', 'a3'].map((html) => render(html, A));
    await startedCount(2);
    expect(pool.stats()).toMatchObject({ idle: 1, waiting: 2 });
    renders.push(render('b0', B));
    await startedCount(3);
    expect(started).toEqual(['a0', 'a1', 'b0']);
    finish('a0');
    await startedCount(4);
    expect(started[3]).toBe('a2');
    for (const html of ['a1', 'b0', 'a2']) finish(html);
    await startedCount(5);
    finish('a3');
    await Promise.all(renders);
  });
});

describe('renderer: per-workspace queue bound', () => {
  it("a full workspace queue answers 503 renderer_overloaded at once; other workspaces still queue", async () => {
    const { pool, render, started, startedCount, finish } = await warmPool({ poolSize: 1, workspaceQueueMax: 2, queueMax: 3 });
    const accepted = [render('a0', A), render('a1', A), render('a2', A)];
    await startedCount(1);
    expect(await refusal(render('a3', A))).toBe('unavailable:renderer_overloaded:1: too many PDFs of this workspace are being rendered; retry later');
    accepted.push(render('b0', B));
    expect(pool.stats().waiting).toBe(3);
    // The whole queue is full too: a third workspace is refused by the global bound.
    expect(await refusal(render('c0', of(3)))).toBe('unavailable:renderer_overloaded:1: too many PDFs are being rendered; retry later');
    for (let i = 0; i < 4; i++) {
      await startedCount(i + 1);
      finish(started[i]);
    }
    await Promise.all(accepted);
    expect(started).toEqual(['a0', 'b0', 'a1', 'a2']);
  });

  it('live and sandbox renders of one workspace share its lane', async () => {
    const { render, startedCount, finish } = await warmPool({ poolSize: 1, workspaceQueueMax: 1 });
    const live = render('a0', A);
    await startedCount(1);
    const sandbox = render('a1', { tenant: { account_id: 1, livemode: false } });
    expect(await refusal(render('a2', A))).toMatch(/^unavailable:renderer_overloaded:1: too many PDFs of this workspace/);
    finish('a0');
    await startedCount(2);
    finish('a1');
    await Promise.all([live, sandbox]);
  });
});

describe('renderer: pre-renders yield to downloads', () => {
  it('a queued pre-render waits while any download can take the page', async () => {
    const { render, started, startedCount, finish } = await warmPool({ poolSize: 1 });
    const renders = [render('a0', A), render('p0', of(3, true)), render('a1', A), render('b0', B)];
    for (let i = 0; i < renders.length; i++) {
      await startedCount(i + 1);
      finish(started[i]);
    }
    await Promise.all(renders);
    expect(started).toEqual(['a0', 'b0', 'a1', 'p0']);
  });

  it('a download that joins a queued pre-render of the same PDF makes it urgent (Pdfs)', async () => {
    const { pool, render, started, startedCount, finish } = await warmPool({ poolSize: 1 });
    const template = { version: 'v1', html: () => '<p>the invoice</p>' };
    const source = { document: async () => printable(), workspace: async () => workspace(), logo: async () => null };
    const pdfs = new Pdfs({ source, template, renderer: pool, store: { get: async () => null, put: async () => undefined } });
    const tenant = { account_id: 3, livemode: true };
    const busy = [render('a0', A), render('a1', A)];
    await startedCount(1);
    const prerender = pdfs.pdf(tenant, 'invoice', 1, '', { background: true });
    prerender.catch(() => undefined);
    await waitFor(() => pool.stats().waiting === 2);
    const download = pdfs.pdf(tenant, 'invoice', 1);
    download.catch(() => undefined);
    finish('a0');
    await startedCount(2);
    expect(started[1]).toBe('<p>the invoice</p>');
    finish(started[1]);
    expect((await download).pdf?.toString()).toBe((await prerender).pdf?.toString());
    await startedCount(3);
    finish('a1');
    await Promise.all(busy);
  });
});

/** Lets the pool's promise chains run until `condition` holds (bounded: turns of the event loop, no clock). */
async function waitFor(condition: () => boolean, turns = 1000): Promise<void> {
  for (let i = 0; i < turns && !condition(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error('condition not met');
}
