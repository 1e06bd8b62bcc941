// Gapless numbering (services/documents/domain/numbering.ts): per workspace, type and year; strictly
// increasing; no gap and no duplicate with concurrent issuers (replicas) and issuers dying mid-issue.
import { formatNumber, validateNumberFormat } from '../../services/documents/domain/number-format';
import { domain, Domain, errorCode, line, tempDbFile, tenant } from './documents.fixtures';

const draft = async (d: Domain, type: 'invoice' | 'credit_note' = 'invoice', extra: Record<string, unknown> = {}) =>
  (await d.documents.create(tenant, type, { purchaser_id: 100, line_items: [line()], ...extra })).record;

describe('number formats', () => {
  it('default YYYYNNNNNN, YY, literals and escapes', () => {
    expect(formatNumber('YYYYNNNNNN', 2026, 1)).toBe('2026000001');
    expect(formatNumber('FV-YY/NNNN', 2026, 42)).toBe('FV-26/0042');
    expect(formatNumber('I\\NV-YYYY-NNN', 2026, 7)).toBe('INV-2026-007');
    expect(formatNumber('YYYYNN', 2026, 123)).toBe('2026123'); // outgrows the run, stays unique
  });

  it('refuses formats without exactly one counter or without a year', () => {
    expect(() => validateNumberFormat('NNNN')).toThrow(/year/);
    expect(() => validateNumberFormat('INV-YYYY-NNNN')).toThrow(/exactly one run of N/);
    expect(() => validateNumberFormat('YYYY NNNN')).toThrow(/letters, digits/);
    expect(validateNumberFormat('I\\NV-YYYY-NNNN')).toBe('I\\NV-YYYY-NNNN');
  });
});

describe('issuing numbers', () => {
  it('numbers invoices and credit notes from separate sequences, per year, in the workspace format', async () => {
    const d = domain();
    const a = await draft(d);
    const b = await draft(d);
    const c = await draft(d, 'credit_note');
    expect((await d.lifecycle.issue(tenant, 'invoice', b.id)).record.number).toBe('2026000001');
    expect((await d.lifecycle.issue(tenant, 'invoice', a.id)).record.number).toBe('2026000002');
    expect((await d.lifecycle.issue(tenant, 'credit_note', c.id)).record.number).toBe('2026000001');
    const old = await draft(d, 'invoice', { issue_date: '2025-12-31' });
    expect((await d.lifecycle.issue(tenant, 'invoice', old.id)).record.number).toBe('2025000001');
    await d.ctx.settings.set(tenant.account_id, { number_format: 'FV-YYYY-NNNN' });
    const e = await draft(d);
    expect((await d.lifecycle.issue(tenant, 'invoice', e.id)).record.number).toBe('FV-2026-0003');
  });

  it('sandbox (test) documents have their own sequence', async () => {
    const d = domain();
    const live = await draft(d);
    const test = (await d.documents.create({ ...tenant, livemode: false }, 'invoice', { purchaser_id: 100, line_items: [line()] })).record;
    expect((await d.lifecycle.issue(tenant, 'invoice', live.id)).record.number).toBe('2026000001');
    expect((await d.lifecycle.issue({ ...tenant, livemode: false }, 'invoice', test.id)).record.number).toBe('2026000001');
  });

  it('refuses to issue anything but a draft (422), and unknown or other-type ids (404)', async () => {
    const d = domain();
    const a = await draft(d);
    await d.lifecycle.issue(tenant, 'invoice', a.id);
    expect(await errorCode(d.lifecycle.issue(tenant, 'invoice', a.id))).toBe('not_draft');
    expect(await errorCode(d.lifecycle.issue(tenant, 'credit_note', a.id))).toBe('resource_not_found');
    expect(await errorCode(d.lifecycle.issue({ ...tenant, account_id: 8 }, 'invoice', a.id))).toBe('resource_not_found');
    const empty = await draft(d, 'invoice', { line_items: [] });
    expect(await errorCode(d.lifecycle.issue(tenant, 'invoice', empty.id))).toBe('no_line_items');
  });

  it('two replicas issuing 40 drafts concurrently hand out 1..40 exactly once', async () => {
    const file = tempDbFile();
    const replicas = [domain(file), domain(file)];
    const drafts = [];
    for (let i = 0; i < 40; i++) drafts.push(await draft(replicas[i % 2]));
    const issued = await Promise.all(drafts.map((doc, i) => replicas[(i * 7) % 2].lifecycle.issue(tenant, 'invoice', doc.id)));
    const numbers = issued.map((v) => Number(v.record.number!.slice(4))).sort((x, y) => x - y);
    expect(numbers).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('the same draft issued concurrently by both replicas gets one number; the other call gets 422', async () => {
    const file = tempDbFile();
    const [r1, r2] = [domain(file), domain(file)];
    const doc = await draft(r1);
    const results = await Promise.allSettled([r1.lifecycle.issue(tenant, 'invoice', doc.id), r2.lifecycle.issue(tenant, 'invoice', doc.id)]);
    expect(results.filter((r) => r.status === 'fulfilled')).not.toHaveLength(0);
    const next = await draft(r1);
    expect((await r2.lifecycle.issue(tenant, 'invoice', next.id)).record.number).toBe('2026000002');
  });
});

describe('an issuer dying mid-issue', () => {
  const crashing = (file: string) =>
    domain(file, {
      afterReserve: async () => {
        throw new Error('process died after reserving the number');
      },
    });

  it('leaves a reserved number that the next issuer writes on the document first (roll forward)', async () => {
    const file = tempDbFile();
    const dead = crashing(file);
    const alive = domain(file);
    const first = await draft(alive);
    const second = await draft(alive);
    await expect(dead.lifecycle.issue(tenant, 'invoice', first.id)).rejects.toThrow('process died');
    expect((await alive.documents.get(tenant, 'invoice', first.id)).record.status).toBe('draft');
    expect((await alive.lifecycle.issue(tenant, 'invoice', second.id)).record.number).toBe('2026000002');
    const rolled = await alive.documents.get(tenant, 'invoice', first.id);
    expect(rolled.record).toMatchObject({ status: 'exposed', number: '2026000001' });
    expect(rolled.record.outbox.map((e) => e.type)).toContain('documents.invoice.issued');
  });

  it('gives the number back when the document was deleted meanwhile (roll back): still no gap', async () => {
    const file = tempDbFile();
    const dead = crashing(file);
    const alive = domain(file);
    const first = await draft(alive);
    const second = await draft(alive);
    await expect(dead.lifecycle.issue(tenant, 'invoice', first.id)).rejects.toThrow();
    await alive.documents.delete(tenant, 'invoice', first.id);
    expect((await alive.lifecycle.issue(tenant, 'invoice', second.id)).record.number).toBe('2026000001');
  });

  it('a retry of the interrupted issue completes it with the reserved number', async () => {
    const file = tempDbFile();
    const dead = crashing(file);
    const alive = domain(file);
    const doc = await draft(alive);
    await expect(dead.lifecycle.issue(tenant, 'invoice', doc.id)).rejects.toThrow();
    // The retry finds the pending number of its own document and completes the issue with it.
    expect((await alive.lifecycle.issue(tenant, 'invoice', doc.id)).record.number).toBe('2026000001');
    expect(await errorCode(alive.lifecycle.issue(tenant, 'invoice', doc.id))).toBe('not_draft');
  });
});
