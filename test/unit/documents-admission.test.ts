// Admission control of issues (services/documents/domain/admission.ts): an issue starts only if the
// issues admitted ahead of it, at the pace issues completed recently, leave it time to finish before its
// caller's deadline minus a margin; otherwise 503 issuing_overloaded at once, its work never run. A fake
// clock and work held open by the test: no sleeps, no timed assertions.
import { Admission, AdmissionOptions } from '../../services/documents/domain/admission';
import { DomainError } from '../../services/shared/errors';
import { domain, errorCode, line, tenant } from './documents.fixtures';

/** An admission on a fake clock, and work the test finishes when it wants. */
function harness(options: Partial<AdmissionOptions> = {}) {
  const clock = { t: 1_000_000 };
  const admission = new Admission({ maxInFlight: 1000, initialInFlight: 3, marginMs: 2000, now: () => clock.t, ...options });
  const held: Array<{ done: Promise<unknown>; finish(): void }> = [];
  let ran = 0;
  /** Starts an issue; resolves to 'admitted' (its work runs and is held) or the refusal's code. */
  const start = async (deadline?: number): Promise<string> => {
    let finish!: () => void;
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const before = ran;
    const done = admission.run(deadline, async () => {
      ran++;
      await gate;
    });
    // Admission is decided synchronously with the call: the work has started, or the promise is rejected.
    if (ran === before) return ((await done.then(() => null, (err: unknown) => err)) as DomainError).code;
    held.push({ done, finish });
    return 'admitted';
  };
  /** Finishes the oldest held issues. */
  const finish = async (count = held.length) => {
    const now = held.splice(0, count);
    for (const h of now) h.finish();
    await Promise.all(now.map((h) => h.done));
  };
  /** One issue alone taking `ms`: the pace measured is `ms` per issue. */
  const measure = async (ms: number) => {
    await start();
    clock.t += ms;
    await finish();
  };
  /** Issues started now with `deadlineIn` ms left until the first refusal; how many were admitted. */
  const burst = async (deadlineIn: number | undefined, most = 2000) => {
    for (let i = 0; i < most; i++) {
      const answer = await start(deadlineIn === undefined ? undefined : clock.t + deadlineIn);
      if (answer !== 'admitted') return { admitted: i, refusal: answer };
    }
    return { admitted: most, refusal: null };
  };
  return { admission, clock, start, finish, measure, burst, ran: () => ran };
}

describe('admission before the pace is known', () => {
  it('admits initialInFlight issues, then refuses the next at once with 503 issuing_overloaded (retry after 1 s), its work not run', async () => {
    const h = harness({ initialInFlight: 3 });
    expect(await h.burst(10_000)).toEqual({ admitted: 3, refusal: 'issuing_overloaded' });
    expect(h.ran()).toBe(3);
    try {
      await h.admission.run(h.clock.t + 10_000, async () => undefined);
      throw new Error('admitted');
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).kind).toBe('unavailable');
      expect((err as DomainError).metadata).toEqual({ retry_after_seconds: '1' });
    }
  });
});

describe('admission at the measured pace', () => {
  it('one issue took 100 ms alone: with 10 s left and a 2 s margin, 80 are admitted (80 × 100 ms ≤ 8 s), the 81st is refused', async () => {
    const h = harness();
    await h.measure(100);
    expect(await h.burst(10_000)).toEqual({ admitted: 80, refusal: 'issuing_overloaded' });
  });

  it('less time left admits fewer: 3 s left, margin capped at half of it (1.5 s) → 15', async () => {
    const h = harness();
    await h.measure(100);
    expect(await h.burst(3_000)).toEqual({ admitted: 15, refusal: 'issuing_overloaded' });
  });

  it('a slower pace admits fewer: 400 ms per issue → 20', async () => {
    const h = harness();
    await h.measure(400);
    expect(await h.burst(10_000)).toEqual({ admitted: 20, refusal: 'issuing_overloaded' });
  });

  it('a caller without a deadline is bounded by maxInFlight alone', async () => {
    const h = harness({ maxInFlight: 50 });
    await h.measure(1000);
    expect(await h.burst(undefined)).toEqual({ admitted: 50, refusal: 'issuing_overloaded' });
  });

  it('concurrent completions raise the measured throughput: 40 completing together after 1 s count as 40 (≈ 26 ms each), not one', async () => {
    const h = harness();
    await h.measure(100);
    expect((await h.burst(10_000, 40)).admitted).toBe(40);
    h.clock.t += 1000;
    await h.finish();
    const { admitted, refusal } = await h.burst(10_000);
    expect(refusal).toBe('issuing_overloaded');
    expect(admitted).toBeGreaterThan(250); // 80 at the pace of one issue alone
  });

  it('a batch of 10 completing together after 1 s, at the pace measured before (100 ms each): the pace stays 100 ms', async () => {
    const h = harness();
    await h.measure(100);
    expect((await h.burst(10_000, 10)).admitted).toBe(10);
    h.clock.t += 1000;
    await h.finish();
    // (8050 - 2000) / 100 → 80 more (a margin of 50 ms keeps rounding out of the count).
    expect(await h.burst(10_050)).toEqual({ admitted: 80, refusal: 'issuing_overloaded' });
  });
});

describe('admission while the store stalls', () => {
  it('no completion for 3 s with 10 in flight: the open window bounds the pace (3 s per issue), the next arrival is refused', async () => {
    const h = harness();
    await h.measure(100);
    expect((await h.burst(10_000, 10)).admitted).toBe(10);
    h.clock.t += 3000;
    expect(await h.start(h.clock.t + 10_000)).toBe('issuing_overloaded');
  });
});

describe('admission after a burst', () => {
  it('once the admitted issues completed, the next one is admitted again; idle time does not count as slowness', async () => {
    const h = harness();
    await h.measure(100);
    expect(await h.burst(10_000)).toEqual({ admitted: 80, refusal: 'issuing_overloaded' });
    h.clock.t += 8000;
    await h.finish();
    expect(h.admission.admitted).toBe(0);
    h.clock.t += 60_000; // idle
    await h.measure(100);
    expect(h.admission.expectedMs()).toBeLessThan(200); // 80 issues in 8 s, then one in 100 ms: ≈ 100 ms, not the burst's 8 s
    expect(await h.start(h.clock.t + 10_000)).toBe('admitted');
  });

  it('a failing issue gives its place back', async () => {
    const h = harness({ initialInFlight: 1 });
    await expect(h.admission.run(undefined, async () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    expect(h.admission.admitted).toBe(0);
    expect(await h.start(h.clock.t + 10_000)).toBe('admitted');
  });

});

describe('POST invoices/<id>/issue behind admission', () => {
  it('an issue refused at admission is answered issuing_overloaded before any of its work: its draft stays a draft and issues later', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let queued!: () => void;
    const first = new Promise<void>((resolve) => (queued = resolve));
    // One issue at a time until the pace is known; the first one is held in the numbering queue.
    const d = domain(undefined, { queued: () => queued(), beforeBatch: () => held }, { admission: { initialInFlight: 1 } });
    const a = (await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] })).record;
    const b = (await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] })).record;
    const issuing = d.lifecycle.issue(tenant, 'invoice', a.id, undefined, Date.now() + 60_000);
    await first;
    const reads = countReads(d);
    expect(await errorCode(d.lifecycle.issue(tenant, 'invoice', b.id, undefined, Date.now() + 60_000))).toBe('issuing_overloaded');
    expect(reads()).toBe(0);
    release();
    expect((await issuing).record.number).toMatch(/1$/);
    expect((await d.ctx.store.documents.get(b.id))!.status).toBe('draft');
    expect((await d.lifecycle.issue(tenant, 'invoice', b.id, undefined, Date.now() + 60_000)).record.number).toMatch(/2$/);
  });
});

function countReads(d: ReturnType<typeof domain>): () => number {
  let reads = 0;
  const get = d.ctx.store.documents.get.bind(d.ctx.store.documents);
  d.ctx.store.documents.get = (id) => {
    reads++;
    return get(id);
  };
  return () => reads;
}
