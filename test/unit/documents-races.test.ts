// Races of issuing (services/documents/domain/numbering.ts, lifecycle.ts): a check must hold for the
// version that is written. Interleavings are driven with the numbering's afterReserve hook (a latch
// between "number reserved" and "number written"), never with sleeps.
import { PendingNumber } from '../../services/documents/ports/documents-store';
import { domain, Domain, errorCode, line, tempDbFile, tenant } from './documents.fixtures';

/** A hook that runs `race` the first time a number is reserved, before it is written. */
function onceAfterReserve(race: (pending: PendingNumber) => Promise<void>) {
  let fired = false;
  return {
    afterReserve: async ([pending]: PendingNumber[]) => {
      if (fired) return;
      fired = true;
      await race(pending);
    },
  };
}

/** A latch: the hook parks the issuer on `reached` until the test calls `release()`. */
function latch() {
  let open!: () => void;
  let arrived!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  return {
    reached,
    release: () => open(),
    hooks: onceAfterReserve(async () => {
      arrived();
      await gate;
    }),
  };
}

const issuedInvoice = async (d: Domain, unitPrice = '100') => {
  const draft = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line(unitPrice)] });
  return (await d.lifecycle.issue(tenant, 'invoice', draft.record.id)).record;
};
const stored = async (d: Domain, id: number) => (await d.ctx.store.documents.get(id))!;

describe('issue racing a PATCH of the same draft', () => {
  it('a credit note grown past its invoice while being numbered is refused: credits never exceed the invoice', async () => {
    const file = tempDbFile();
    const other = domain(file);
    const d = domain(
      file,
      onceAfterReserve(async (p) => {
        await other.documents.update(tenant, 'credit_note', p.document_id, { line_items: [line('1000')] });
      }),
    );
    const invoice = await issuedInvoice(other); // 121.00
    const note = await d.documents.create(tenant, 'credit_note', { invoice_id: invoice.id, line_items: [line('10')] });
    expect(await errorCode(d.lifecycle.issue(tenant, 'credit_note', note.record.id))).toBe('credit_exceeds_amount_due');
    expect((await stored(d, note.record.id)).status).toBe('draft');
    const after = await d.documents.get(tenant, 'invoice', invoice.id);
    expect(after.credited_amount).toBe('0.00');
    expect(after.amount_due).toBe('121.00');
  });

  it('a draft emptied of its lines while being numbered is not issued (422 no_line_items), and its number is given back', async () => {
    const file = tempDbFile();
    const other = domain(file);
    const d = domain(
      file,
      onceAfterReserve(async (p) => {
        await other.documents.update(tenant, 'invoice', p.document_id, { line_items: [] });
      }),
    );
    const draft = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] });
    expect(await errorCode(d.lifecycle.issue(tenant, 'invoice', draft.record.id))).toBe('no_line_items');
    expect(await stored(d, draft.record.id)).toMatchObject({ status: 'draft', number: null });
    expect((await issuedInvoice(other)).number).toBe('2026000001');
  });

  it('an issue_date moved across the year boundary while being numbered takes a number of its own year', async () => {
    const file = tempDbFile();
    const other = domain(file);
    const d = domain(
      file,
      onceAfterReserve(async (p) => {
        await other.documents.update(tenant, 'invoice', p.document_id, { issue_date: '2025-12-31' });
      }),
    );
    const draft = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, line_items: [line()] }); // 2026-03-15
    const issued = (await d.lifecycle.issue(tenant, 'invoice', draft.record.id)).record;
    expect(issued).toMatchObject({ issue_date: '2025-12-31', number: '2025000001', sequence_year: 2025 });
    // The 2026 number reserved first was given back: the 2026 sequence has no gap.
    expect((await issuedInvoice(other)).number).toBe('2026000001');
  });
});

describe('completing an interrupted issue (roll forward) does everything issuing does', () => {
  it('a credit note numbered by the next issuer is netted against its invoice, with the invoice event', async () => {
    const file = tempDbFile();
    const dead = domain(file, {
      afterReserve: async () => {
        throw new Error('process died after reserving the number');
      },
    });
    const alive = domain(file);
    const invoice = await issuedInvoice(alive);
    const note = await alive.documents.create(tenant, 'credit_note', { invoice_id: invoice.id, line_items: [line('10')] });
    await expect(dead.lifecycle.issue(tenant, 'credit_note', note.record.id)).rejects.toThrow('process died');
    const next = await alive.documents.create(tenant, 'credit_note', { purchaser_id: 100, line_items: [line('1')] });
    expect((await alive.lifecycle.issue(tenant, 'credit_note', next.record.id)).record.number).toBe('2026000002');

    const rolled = await stored(alive, note.record.id);
    expect(rolled).toMatchObject({ status: 'exposed', number: '2026000001' });
    // Read raw (a GET would settle it on its own): the roll-forward itself applied the credit.
    const raw = await stored(alive, invoice.id);
    expect(raw.credits).toEqual([{ credit_note_id: note.record.id, amount: '12.10', state: 'applied' }]);
    const updated = raw.outbox.filter((e) => e.type === 'documents.invoice.updated');
    expect(updated.map((e) => 'document_changed' in e.payload && e.payload.document_changed.amount_due)).toContain('108.90');
  });
});

describe('an invoice with a credit note in flight', () => {
  it('mark_paid → 422 credit_note_pending and delete → 422 invoice_has_credit_notes until the note settles', async () => {
    const file = tempDbFile();
    const gate = latch();
    const d = domain(file, gate.hooks);
    const other = domain(file);
    const invoice = await issuedInvoice(other);
    const note = await d.documents.create(tenant, 'credit_note', { invoice_id: invoice.id, line_items: [line('10')] });
    const issuing = d.lifecycle.issue(tenant, 'credit_note', note.record.id);
    await gate.reached;
    expect(await errorCode(other.lifecycle.markPaid(tenant, invoice.id))).toBe('credit_note_pending');
    expect(await errorCode(other.documents.delete(tenant, 'invoice', invoice.id))).toBe('invoice_has_credit_notes');
    gate.release();
    expect((await issuing).record.status).toBe('exposed');
    const paid = await other.lifecycle.markPaid(tenant, invoice.id);
    expect(paid).toMatchObject({ credited_amount: '12.10', amount_due: '0.00' });
    expect(paid.record.status).toBe('paid');
  });

  it('an invoice whose credit note is issued cannot be deleted, so the note never points at nothing', async () => {
    const d = domain();
    const invoice = await issuedInvoice(d);
    const note = await d.documents.create(tenant, 'credit_note', { invoice_id: invoice.id, line_items: [line('10')] });
    await d.lifecycle.issue(tenant, 'credit_note', note.record.id);
    expect(await errorCode(d.documents.delete(tenant, 'invoice', invoice.id))).toBe('invoice_has_credit_notes');
    expect((await d.documents.get(tenant, 'credit_note', note.record.id)).invoice).toMatchObject({ id: invoice.id, status: 'exposed' });
  });
});

describe('number text', () => {
  it('two formats printing the same number: the second issue → 422 number_taken, the draft stays a draft, no gap', async () => {
    const d = domain();
    await d.ctx.settings.set(tenant.account_id, { number_format: 'YYN' });
    const a = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, issue_date: '2012-06-01', line_items: [line()] });
    expect((await d.lifecycle.issue(tenant, 'invoice', a.record.id)).record.number).toBe('121');
    await d.ctx.settings.set(tenant.account_id, { number_format: 'NYY' });
    const b = await d.documents.create(tenant, 'invoice', { purchaser_id: 100, issue_date: '2021-06-01', line_items: [line()] });
    expect(await errorCode(d.lifecycle.issue(tenant, 'invoice', b.record.id))).toBe('number_taken');
    expect(await stored(d, b.record.id)).toMatchObject({ status: 'draft', number: null });
    await d.ctx.settings.set(tenant.account_id, { number_format: 'I\\NV-YYYY-N' });
    expect((await d.lifecycle.issue(tenant, 'invoice', b.record.id)).record.number).toBe('INV-2021-1');
  });

  it('a proforma whose counter prints a taken number skips to the next counter', async () => {
    const d = domain();
    await d.ctx.settings.set(tenant.account_id, { number_format: 'YYN' });
    const first = await d.documents.create(tenant, 'proforma', { purchaser_id: 100, issue_date: '2012-06-01', line_items: [line()] });
    expect(first.record.number).toBe('121');
    await d.ctx.settings.set(tenant.account_id, { number_format: 'NYY' });
    const second = await d.documents.create(tenant, 'proforma', { purchaser_id: 100, issue_date: '2021-06-01', line_items: [line()] });
    expect(second.record.number).toBe('221');
  });
});

describe('issued documents are frozen', () => {
  it('a PATCH of an issued invoice sending its purchaser_id back does not re-copy the contact', async () => {
    const d = domain();
    const invoice = await issuedInvoice(d);
    d.directory.purchasers.set(100, { ...d.directory.purchasers.get(100)!, name: 'Renamed a.s.' });
    const patched = await d.documents.update(tenant, 'invoice', invoice.id, { purchaser_id: 100, pdf_language: 'en' });
    expect(patched.record.purchaser!.name).toBe('Customer a.s.');
    expect(patched.record.pdf_language).toBe('en');
  });

  it('a proforma whose conversion is in flight is locked: the invoice is being written from its content', async () => {
    const d = domain();
    const proforma = (await d.documents.create(tenant, 'proforma', { purchaser_id: 100, line_items: [line()] })).record;
    // Step 1 of convert_to_invoice (the invoice id reserved on the proforma), as an interrupted conversion leaves it.
    await d.ctx.write({ ...(await stored(d, proforma.id)), conversion: { invoice_id: await d.ctx.store.nextId('documents.document') } });
    expect(await errorCode(d.documents.update(tenant, 'proforma', proforma.id, { line_items: [line('1')] }))).toBe('document_locked');
    const invoice = await d.lifecycle.convertProforma(tenant, proforma.id);
    expect(invoice.record.totals.total).toBe(proforma.totals.total);
  });
});
