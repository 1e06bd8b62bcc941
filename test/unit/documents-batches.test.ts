// Issuing at volume (services/documents/domain/numbering.ts, group-commit.ts, credits.ts): drafts
// waiting for one sequence are numbered as one batch — one reservation of a range, one write per
// document in number order, one release — and every numbering guarantee still holds: gapless,
// strictly increasing, checked on the version written, crash-safe between any two steps of a batch,
// across two replicas sharing the store. Batches are formed with hooks (the leader is held until the
// drafts under test have queued), never with sleeps.
import { NumberingHooks } from '../../services/documents/domain/numbering';
import { DocumentRecord, PendingNumber } from '../../services/documents/ports/documents-store';
import { domain, Domain, errorCode, line, tempDbFile, tenant } from './documents.fixtures';

const draft = async (d: Domain, extra: Record<string, unknown> = {}, type: 'invoice' | 'credit_note' = 'invoice') =>
  (await d.documents.create(tenant, type, { purchaser_id: 100, line_items: [line()], ...extra })).record;

const counter = (doc: { number: string | null }) => Number(doc.number!.slice(4));
const stored = async (d: Domain, id: number) => (await d.ctx.store.documents.get(id))!;

/** Holds the first batch until `size` drafts wait in the queue, so they are numbered as one batch. */
function batchOf(size: number, more: NumberingHooks = {}): NumberingHooks {
  let full!: () => void;
  const filled = new Promise<void>((resolve) => (full = resolve));
  let held = false;
  return {
    ...more,
    queued: (_key, waiting) => {
      if (waiting >= size) full();
    },
    beforeBatch: async () => {
      if (held) return;
      held = true;
      await filled;
    },
  };
}

/** Counts writes of the sequence records (reservations, compactions, releases). */
function countSequenceWrites(d: Domain): () => number {
  let writes = 0;
  const update = d.ctx.store.sequences.update.bind(d.ctx.store.sequences);
  d.ctx.store.sequences.update = (doc) => {
    writes++;
    return update(doc);
  };
  return () => writes;
}

describe('a batch: drafts waiting together share one reservation', () => {
  it('5 drafts queued together: numbered 1..5 in the order they queued, with two sequence writes (reserve, release)', async () => {
    const d = domain(tempDbFile(), batchOf(5));
    const drafts = [];
    for (let i = 0; i < 5; i++) drafts.push(await draft(d));
    const writes = countSequenceWrites(d);
    const issued = await Promise.all(drafts.map((doc) => d.lifecycle.issue(tenant, 'invoice', doc.id)));
    expect(issued.map((v) => counter(v.record)).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
    expect(writes()).toBe(2);
    for (const v of issued) expect(v.record.outbox.map((e) => e.type)).toContain('documents.invoice.issued');
  });

  it('the same draft twice in one batch takes one number; the other request answers 422 not_draft on its retry', async () => {
    const d = domain(tempDbFile(), batchOf(3));
    const [a, b] = [await draft(d), await draft(d)];
    const results = await Promise.allSettled([
      d.lifecycle.issue(tenant, 'invoice', a.id),
      d.lifecycle.issue(tenant, 'invoice', a.id),
      d.lifecycle.issue(tenant, 'invoice', b.id),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3); // both of a's answer the issued document
    expect([counter(await stored(d, a.id)), counter(await stored(d, b.id))].sort()).toEqual([1, 2]);
  });
});

describe('a draft of a batch that cannot take its number: the numbers behind it close the gap (compaction)', () => {
  it('the middle draft emptied by a PATCH after the reservation: the others get 1 and 2, it is refused as it now is', async () => {
    const file = tempDbFile();
    const other = domain(file);
    let middle = 0;
    const d = domain(
      file,
      batchOf(3, {
        afterReserve: async (batch: PendingNumber[]) => {
          if (batch.length === 3 && !middle) {
            middle = batch[1].document_id;
            await other.documents.update(tenant, 'invoice', middle, { line_items: [] });
          }
        },
      }),
    );
    const drafts = [await draft(d), await draft(d), await draft(d)];
    const results = await Promise.allSettled(drafts.map((doc) => d.lifecycle.issue(tenant, 'invoice', doc.id)));
    const refused = drafts.findIndex((doc) => doc.id === middle);
    expect(results[refused]).toMatchObject({ status: 'rejected', reason: { code: 'no_line_items' } });
    const numbers = await Promise.all(drafts.filter((doc) => doc.id !== middle).map(async (doc) => counter(await stored(d, doc.id))));
    expect(numbers.sort()).toEqual([1, 2]);
    expect(await stored(d, middle)).toMatchObject({ status: 'draft', number: null });
    expect(counter((await d.lifecycle.issue(tenant, 'invoice', (await draft(other)).id)).record)).toBe(3);
  });

  it('the middle draft PATCHed (still issuable): it is issued as it now is, after the others, still gapless', async () => {
    const file = tempDbFile();
    const other = domain(file);
    let middle = 0;
    const d = domain(
      file,
      batchOf(3, {
        afterReserve: async (batch: PendingNumber[]) => {
          if (batch.length === 3 && !middle) {
            middle = batch[1].document_id;
            await other.documents.update(tenant, 'invoice', middle, { note: 'changed while being numbered' });
          }
        },
      }),
    );
    const drafts = [await draft(d), await draft(d), await draft(d)];
    const issued = await Promise.all(drafts.map((doc) => d.lifecycle.issue(tenant, 'invoice', doc.id)));
    expect(issued.map((v) => counter(v.record)).sort()).toEqual([1, 2, 3]);
    const changed = issued.find((v) => v.record.id === middle)!.record;
    expect(changed).toMatchObject({ note: 'changed while being numbered', number: '2026000003' });
  });
});

describe('an issuer dying between any two steps of a batch', () => {
  // The steps of a batch of three: reserve, apply ×3, release; then the credits (none for invoices).
  const steps: Array<[string, (die: () => never) => NumberingHooks]> = [
    ['after the reservation', (die) => ({ afterReserve: async () => die() })],
    ['after the 1st number was written', (die) => ({ afterApply: async (p) => (p.number === 1 ? die() : undefined) })],
    ['after the 2nd number was written', (die) => ({ afterApply: async (p) => (p.number === 2 ? die() : undefined) })],
    ['after the 3rd number was written, before the release', (die) => ({ afterApply: async (p) => (p.number === 3 ? die() : undefined) })],
    ['after the release', (die) => ({ afterRelease: async () => die() })],
  ];
  const die = (): never => {
    throw new Error('process died');
  };

  it.each(steps)('%s: the next issuer (another replica) completes the batch; no gap, no duplicate; retries answer their numbers', async (_step, hooks) => {
    const file = tempDbFile();
    const dead = domain(file, batchOf(3, hooks(die)));
    const alive = domain(file);
    const drafts = [await draft(alive), await draft(alive), await draft(alive)];
    const results = await Promise.allSettled(drafts.map((doc) => dead.lifecycle.issue(tenant, 'invoice', doc.id)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    // Another replica issues the next draft: it first completes whatever the dead one left pending.
    const next = await alive.lifecycle.issue(tenant, 'invoice', (await draft(alive)).id);
    expect(counter(next.record)).toBe(4);
    const numbers = await Promise.all(drafts.map(async (doc) => counter(await stored(alive, doc.id))));
    expect(numbers.sort()).toEqual([1, 2, 3]);
    // The retried requests find their drafts issued (with a key they would answer 200; here not_draft).
    for (const doc of drafts) expect(await errorCode(alive.lifecycle.issue(tenant, 'invoice', doc.id))).toBe('not_draft');
  });

  it('after the reservation, with one draft of the dead batch deleted meanwhile: the roll-forward compacts around it', async () => {
    const file = tempDbFile();
    const dead = domain(file, batchOf(3, { afterReserve: async () => die() }));
    const alive = domain(file);
    const drafts = [await draft(alive), await draft(alive), await draft(alive)];
    await Promise.allSettled(drafts.map((doc) => dead.lifecycle.issue(tenant, 'invoice', doc.id)));
    await alive.documents.delete(tenant, 'invoice', drafts[1].id);
    const next = await alive.lifecycle.issue(tenant, 'invoice', (await draft(alive)).id);
    expect(counter(next.record)).toBe(3);
    expect([counter(await stored(alive, drafts[0].id)), counter(await stored(alive, drafts[2].id))].sort()).toEqual([1, 2]);
    expect((await stored(alive, drafts[1].id)).number).toBeNull();
  });

  it('a retry of an interrupted issue (with its key) completes the whole dead batch and answers its own number', async () => {
    const file = tempDbFile();
    const dead = domain(file, batchOf(2, { afterReserve: async () => die() }));
    const alive = domain(file);
    const [a, b] = [await draft(alive), await draft(alive)];
    const key = { key: 'k-a', fingerprint: 'f-a' };
    await Promise.allSettled([dead.lifecycle.issue(tenant, 'invoice', a.id, key), dead.lifecycle.issue(tenant, 'invoice', b.id)]);
    const retried = await alive.lifecycle.issue(tenant, 'invoice', a.id, key);
    expect(retried.record.status).toBe('exposed');
    expect([counter(retried.record), counter(await stored(alive, b.id))].sort()).toEqual([1, 2]);
  });
});

describe('two replicas sharing the store, batching concurrently', () => {
  it('60 drafts issued at once through both replicas: 1..60 exactly once', async () => {
    const file = tempDbFile();
    const replicas = [domain(file), domain(file)];
    const drafts: DocumentRecord[] = [];
    for (let i = 0; i < 60; i++) drafts.push(await draft(replicas[0]));
    const issued = await Promise.all(drafts.map((doc, i) => replicas[i % 2].lifecycle.issue(tenant, 'invoice', doc.id)));
    expect(issued.map((v) => counter(v.record)).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    // Strictly increasing in order of issue: a later issued_at never has a smaller number.
    const byNumber = issued.map((v) => v.record).sort((a, b) => counter(a) - counter(b));
    for (let i = 1; i < byNumber.length; i++) expect(byNumber[i].issued_at! >= byNumber[i - 1].issued_at!).toBe(true);
  });
});

describe('a replica whose pending list another replica walked for it (its grace ran out)', () => {
  it('its callers answer the documents issued from their entries — also those a compaction renumbered — not not_draft', async () => {
    const file = tempDbFile();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    // The slow replica stops right after its reservation, as a replica on a starved CPU would.
    const slow = domain(
      file,
      batchOf(3, {
        afterReserve: async () => {
          if (held) return;
          held = true;
          await released;
        },
      }),
    );
    const fast = domain(file);
    const drafts = [await draft(fast), await draft(fast), await draft(fast)];
    const slowCalls = drafts.map((doc) => slow.lifecycle.issue(tenant, 'invoice', doc.id).then((v) => v.record, (err: { code?: string }) => err.code));
    while (!held) await new Promise((resolve) => setImmediate(resolve));
    // The first draft goes away, so whoever walks the list compacts the two behind it (numbers 2, 3 → 1, 2).
    await fast.documents.delete(tenant, 'invoice', drafts[0].id);
    // The fast replica's clock is past the list's grace: it walks the list for the slow one, then issues its own.
    fast.clock.base += 60_000;
    const next = await fast.lifecycle.issue(tenant, 'invoice', (await draft(fast)).id);
    expect(counter(next.record)).toBe(3);
    release();
    const [first, second, third] = await Promise.all(slowCalls);
    expect(first).toBe('resource_not_found');
    expect(second).toMatchObject({ id: drafts[1].id, status: 'exposed', number: '2026000001' });
    expect(third).toMatchObject({ id: drafts[2].id, status: 'exposed', number: '2026000002' });
    // Still gapless: the slow replica's second reservation for them was compacted away.
    expect(counter(await fast.lifecycle.issue(tenant, 'invoice', (await draft(fast)).id).then((v) => v.record))).toBe(4);
  });
});

describe('the credit cap under batches', () => {
  const issuedInvoice = async (d: Domain, unitPrice: string) => {
    const inv = await draft(d, { line_items: [line(unitPrice, '0')] });
    return (await d.lifecycle.issue(tenant, 'invoice', inv.id)).record;
  };

  it('4 concurrent credit notes of one invoice where 3 fit: exactly 3 issued, the 4th 422 credit_exceeds_amount_due', async () => {
    const d = domain();
    const invoice = await issuedInvoice(d, '300');
    const notes = [];
    for (let i = 0; i < 4; i++) notes.push(await draft(d, { invoice_id: invoice.id, purchaser_id: undefined, line_items: [line('100', '0')] }, 'credit_note'));
    const results = await Promise.allSettled(notes.map((n) => d.lifecycle.issue(tenant, 'credit_note', n.id)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(['credit_exceeds_amount_due']);
    const after = await d.documents.get(tenant, 'invoice', invoice.id);
    expect(after).toMatchObject({ credited_amount: '300.00', amount_due: '0.00' });
  });

  it('the same across two replicas: 12 notes of 100 against 1000 → exactly 10 issued, numbers 1..10', async () => {
    const file = tempDbFile();
    const replicas = [domain(file), domain(file)];
    const invoice = await issuedInvoice(replicas[0], '1000');
    const notes = [];
    for (let i = 0; i < 12; i++) notes.push(await draft(replicas[0], { invoice_id: invoice.id, purchaser_id: undefined, line_items: [line('100', '0')] }, 'credit_note'));
    const results = await Promise.allSettled(notes.map((n, i) => replicas[i % 2].lifecycle.issue(tenant, 'credit_note', n.id)));
    const issued = results.filter((r): r is PromiseFulfilledResult<Awaited<ReturnType<Domain['lifecycle']['issue']>>> => r.status === 'fulfilled');
    expect(issued).toHaveLength(10);
    expect(issued.map((r) => counter(r.value.record)).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    const after = await replicas[1].documents.get(tenant, 'invoice', invoice.id);
    expect(after).toMatchObject({ credited_amount: '1000.00', amount_due: '0.00' });
  });
});

describe('deadlines and load shedding', () => {
  it('a draft whose caller gave up (deadline passed) is dropped before it queues: no number, no sequence write', async () => {
    const d = domain();
    const doc = await draft(d);
    const writes = countSequenceWrites(d);
    expect(await errorCode(d.lifecycle.issue(tenant, 'invoice', doc.id, undefined, Date.now() - 1))).toBe('deadline_exceeded');
    expect(writes()).toBe(0);
    expect(await stored(d, doc.id)).toMatchObject({ status: 'draft', number: null });
    expect(counter((await d.lifecycle.issue(tenant, 'invoice', doc.id)).record)).toBe(1);
  });

  it('a draft whose deadline passes while it waits is dropped when its batch forms; the others are numbered without a gap', async () => {
    let full!: () => void;
    const filled = new Promise<void>((resolve) => (full = resolve));
    let expireAt = 0;
    const d = domain(tempDbFile(), {
      queued: (_key, waiting) => {
        if (waiting >= 2) full();
      },
      beforeBatch: async () => {
        await filled;
        // Bounded: ends as soon as the clock passed the short deadline (a few ms), no fixed sleep.
        while (Date.now() <= expireAt) await new Promise((resolve) => setImmediate(resolve));
      },
    });
    const [a, b] = [await draft(d), await draft(d)];
    expireAt = Date.now() + 30;
    const results = await Promise.allSettled([
      d.lifecycle.issue(tenant, 'invoice', a.id, undefined, expireAt),
      d.lifecycle.issue(tenant, 'invoice', b.id, undefined, Date.now() + 60_000),
    ]);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: 'deadline_exceeded' } });
    expect(results[1]).toMatchObject({ status: 'fulfilled' });
    expect(counter(await stored(d, b.id))).toBe(1);
    expect(await stored(d, a.id)).toMatchObject({ status: 'draft', number: null });
  });

  it('a full queue answers at once: 503 issuing_overloaded (retryable, Retry-After 1), the queued ones are numbered', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const d = domain(tempDbFile(), { maxWaiting: 2, beforeBatch: () => gate });
    const drafts = [await draft(d), await draft(d), await draft(d)];
    // The leader is held before it takes a batch: two drafts wait, whichever comes third finds the queue full.
    const calls = drafts.map((doc) => d.lifecycle.issue(tenant, 'invoice', doc.id));
    const refusal = await Promise.race(calls.map((call, i) => call.then(() => new Promise<never>(() => undefined), (err: unknown) => ({ i, err }))));
    expect(refusal.err).toMatchObject({ code: 'issuing_overloaded', kind: 'unavailable', metadata: { retry_after_seconds: '1' } });
    release();
    const numbered = await Promise.all(calls.filter((_, i) => i !== refusal.i));
    expect(numbered.map((v) => counter(v.record)).sort()).toEqual([1, 2]);
    expect(counter((await d.lifecycle.issue(tenant, 'invoice', drafts[refusal.i].id)).record)).toBe(3);
  });
});
