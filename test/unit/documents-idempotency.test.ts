// Idempotency-Keys recorded by the documents service with its own writes (services/shared/idempotency.ts):
// a retry of a create, an issue or another action under the same key answers the first result — also
// after the first attempt died half-way — instead of a second document or a false 422 not_draft.
import { randomBytes } from 'node:crypto';
import { IdempotencyToken } from '../../services/shared/idempotency';
import { domain, Domain, errorCode, line, tempDbFile, tenant } from './documents.fixtures';

const token = (fingerprint = 'fp'): IdempotencyToken => ({ key: randomBytes(16).toString('base64url'), fingerprint });
const input = () => ({ purchaser_id: 100, line_items: [line()] });
const invoiceCount = async (d: Domain) => (await d.documents.list(tenant, 'invoice', 100)).length;

describe('create under an Idempotency-Key', () => {
  it('a retry answers the document the first attempt created; one document exists', async () => {
    const d = domain();
    const under = token();
    const first = await d.documents.create(tenant, 'invoice', input(), under);
    const retry = await d.documents.create(tenant, 'invoice', input(), under);
    expect(retry.record.id).toBe(first.record.id);
    expect(await invoiceCount(d)).toBe(1);
  });

  it('two replicas creating under one key at once write one document', async () => {
    const file = tempDbFile();
    const [a, b] = [domain(file), domain(file)];
    const under = token();
    const results = await Promise.all([a.documents.create(tenant, 'invoice', input(), under), b.documents.create(tenant, 'invoice', input(), under)]);
    expect(results[0].record.id).toBe(results[1].record.id);
    expect(await invoiceCount(a)).toBe(1);
  });

  it('the key with another request is 409 idempotency_key_conflict, also across document types', async () => {
    const d = domain();
    const under = token('fp-invoice');
    await d.documents.create(tenant, 'invoice', input(), under);
    expect(await errorCode(d.documents.create(tenant, 'proforma', input(), { ...under, fingerprint: 'fp-proforma' }))).toBe('idempotency_key_conflict');
  });
});

describe('issue under an Idempotency-Key', () => {
  it('a retry after success answers the issued invoice (200), not not_draft; without the key it is still not_draft', async () => {
    const d = domain();
    const draft = (await d.documents.create(tenant, 'invoice', input())).record;
    const under = token();
    const issued = await d.lifecycle.issue(tenant, 'invoice', draft.id, under);
    const retry = await d.lifecycle.issue(tenant, 'invoice', draft.id, under);
    expect(retry.record).toMatchObject({ status: 'exposed', number: issued.record.number });
    expect(await errorCode(d.lifecycle.issue(tenant, 'invoice', draft.id))).toBe('not_draft');
    expect(await errorCode(d.lifecycle.issue(tenant, 'invoice', draft.id, token()))).toBe('not_draft');
    expect(await errorCode(d.lifecycle.issue(tenant, 'invoice', draft.id, { ...under, fingerprint: 'other' }))).toBe('idempotency_key_conflict');
  });

  it('an issue that died after reserving its number: another issuer rolls it forward with the key, and the retry answers it', async () => {
    const file = tempDbFile();
    const dead = domain(file, {
      afterReserve: async () => {
        throw new Error('process died after reserving the number');
      },
    });
    const alive = domain(file);
    const first = (await alive.documents.create(tenant, 'invoice', input())).record;
    const second = (await alive.documents.create(tenant, 'invoice', input())).record;
    const under = token();
    await expect(dead.lifecycle.issue(tenant, 'invoice', first.id, under)).rejects.toThrow('process died');
    await alive.lifecycle.issue(tenant, 'invoice', second.id); // settles the pending number for the dead issuer
    const retry = await alive.lifecycle.issue(tenant, 'invoice', first.id, under);
    expect(retry.record).toMatchObject({ status: 'exposed', number: '2026000001' });
  });

  it('a credit note issue retried after success answers the note', async () => {
    const d = domain();
    const invoice = (await d.documents.create(tenant, 'invoice', input())).record;
    await d.lifecycle.issue(tenant, 'invoice', invoice.id);
    const note = (await d.documents.create(tenant, 'credit_note', { ...input(), invoice_id: invoice.id })).record;
    const under = token();
    await d.lifecycle.issue(tenant, 'credit_note', note.id, under);
    expect((await d.lifecycle.issue(tenant, 'credit_note', note.id, under)).record.status).toBe('exposed');
  });
});

describe('other actions under an Idempotency-Key', () => {
  it('send retried after success mails once (one send_requested event)', async () => {
    const d = domain();
    const draft = (await d.documents.create(tenant, 'invoice', input())).record;
    await d.lifecycle.issue(tenant, 'invoice', draft.id);
    const under = token();
    await d.lifecycle.send(tenant, draft.id, { to: [], cc: [], bcc: [] }, under);
    await d.lifecycle.send(tenant, draft.id, { to: [], cc: [], bcc: [] }, under);
    const stored = (await d.ctx.store.documents.get(draft.id))!;
    expect(stored.outbox.filter((e) => e.type === 'documents.invoice.send_requested')).toHaveLength(1);
  });

  it('mark_paid and accept retried answer the document', async () => {
    const d = domain();
    const draft = (await d.documents.create(tenant, 'invoice', input())).record;
    await d.lifecycle.issue(tenant, 'invoice', draft.id);
    const paid = token();
    await d.lifecycle.markPaid(tenant, draft.id, paid);
    expect((await d.lifecycle.markPaid(tenant, draft.id, paid)).record.status).toBe('paid');
    const quote = (await d.documents.create(tenant, 'quote', input())).record;
    const accepted = token();
    await d.lifecycle.acceptQuote(tenant, quote.id, accepted);
    expect((await d.lifecycle.acceptQuote(tenant, quote.id, accepted)).record.status).toBe('accepted');
  });

  it('convert_to_invoice retried after success answers the same invoice, not proforma_already_converted', async () => {
    const d = domain();
    const proforma = (await d.documents.create(tenant, 'proforma', input())).record;
    const under = token();
    const invoice = await d.lifecycle.convertProforma(tenant, proforma.id, under);
    const retry = await d.lifecycle.convertProforma(tenant, proforma.id, under);
    expect(retry.record.id).toBe(invoice.record.id);
    expect(await errorCode(d.lifecycle.convertProforma(tenant, proforma.id, token()))).toBe('proforma_already_converted');
    expect(await invoiceCount(d)).toBe(1);
  });

  it('proforma issue and mark_paid retried answer the proforma, not not_draft', async () => {
    const d = domain();
    const proforma = (await d.documents.create(tenant, 'proforma', input())).record;
    const issued = token();
    await d.lifecycle.issue(tenant, 'proforma', proforma.id, issued);
    expect((await d.lifecycle.issue(tenant, 'proforma', proforma.id, issued)).record.status).toBe('exposed');
    expect(await errorCode(d.lifecycle.issue(tenant, 'proforma', proforma.id, token()))).toBe('not_draft');
    const paid = token();
    await d.lifecycle.markProformaPaid(tenant, proforma.id, paid);
    expect((await d.lifecycle.markProformaPaid(tenant, proforma.id, paid)).record.status).toBe('paid');
  });

  it('a quote conversion retried creates one document', async () => {
    const d = domain();
    const quote = (await d.documents.create(tenant, 'quote', input())).record;
    await d.lifecycle.acceptQuote(tenant, quote.id);
    const under = token();
    const first = await d.lifecycle.convertQuote(tenant, quote.id, 'invoice', under);
    const retry = await d.lifecycle.convertQuote(tenant, quote.id, 'invoice', under);
    expect(retry.record.id).toBe(first.record.id);
    expect(await invoiceCount(d)).toBe(1);
  });
});
