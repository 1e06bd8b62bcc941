// Workflow actions (spec §3): issue, mark_paid, send, convert_to_invoice, accept, quote conversion.
import { fail } from '../../shared/errors';
import { appliedUnder, createdUnder, createOnce, IdempotencyToken, recordedUnder } from '../../shared/idempotency';
import { DuplicateId, VersionConflict } from '../../shared/store/port';
import { Tenant } from '../../shared/tenant';
import { DocType, DocumentRecord } from '../ports/documents-store';
import { defaultDates } from './compose';
import { DocumentsContext, DocumentView, MAX_ATTEMPTS } from './context';
import { newRecord } from './documents';
import { Locale } from './fields';
import { Decimal } from './money';
import { formatNumber } from './number-format';
import { creditCapacity, issuable, withEvents } from './records';
import { resolveMail, SendInput } from './send';

export class Lifecycle {
  constructor(private readonly ctx: DocumentsContext) {}

  // ---- issue (invoices, credit notes) --------------------------------------------------------

  /** Under an Idempotency-Key (recorded with the number), a retry answers the issued document, not not_draft. */
  async issue(tenant: Tenant, type: DocType, id: number, token?: IdempotencyToken): Promise<DocumentView> {
    const doc = await this.ctx.load(tenant, type, id);
    if (appliedUnder(doc, token)) return this.ctx.view(doc);
    if (!issuable(doc)) throw fail.precondition('not_draft', `only a draft ${type.replace('_', ' ')} can be issued; this one is ${doc.status}`);
    const issued = await this.issueRecord(tenant, doc, token);
    if (!issued) {
      const now = await this.ctx.load(tenant, type, id); // 404 when it was deleted meanwhile
      if (appliedUnder(now, token)) return this.ctx.view(now); // a concurrent attempt under the same key issued it
      throw fail.precondition('not_draft', `only a draft ${type.replace('_', ' ')} can be issued`);
    }
    return this.ctx.view(issued);
  }

  /** Issues a draft (numbering, snapshots, credit allocation); null when it stopped being a draft. */
  private async issueRecord(tenant: Tenant, doc: DocumentRecord, token?: IdempotencyToken): Promise<DocumentRecord | null> {
    if (doc.line_items.length === 0) throw fail.precondition('no_line_items', 'a document needs at least one line item to be issued');
    const supplier = await this.ctx.directory.supplier(tenant.account_id);
    const purchaser = (doc.purchaser_id ? await this.ctx.directory.purchaser(tenant, doc.purchaser_id) : null) ?? doc.purchaser;
    const settings = await this.ctx.settings.resolve(tenant.account_id, supplier);
    const credits = doc.type === 'credit_note' && doc.invoice_id ? doc.invoice_id : null;
    if (credits) await this.reserveCredit(tenant, doc, credits);
    let issued: DocumentRecord | null = null;
    try {
      issued = await this.ctx.numbering.assign(tenant, doc.id, settings.number_format, { supplier, purchaser, idempotency: token });
    } finally {
      if (credits) await this.settleCredit(credits, doc.id, issued !== null);
    }
    this.ctx.notify();
    return issued;
  }

  /** Claims the credit note's total on its invoice; refused when it exceeds what the invoice still owes. */
  private async reserveCredit(tenant: Tenant, note: DocumentRecord, invoiceId: number): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      let invoice = await this.ctx.store.documents.get(invoiceId);
      if (!invoice || invoice.type !== 'invoice' || invoice.deleted !== null || invoice.account_id !== tenant.account_id) {
        throw fail.precondition('invoice_not_found', 'the source invoice of this credit note no longer exists');
      }
      invoice = await this.ctx.reconcileCredits(invoice);
      if (invoice.status === 'draft') throw fail.precondition('invoice_not_issued', 'the source invoice is not issued');
      if (invoice.credits.some((c) => c.credit_note_id === note.id)) return;
      const capacity = creditCapacity(invoice, note.id);
      if (new Decimal(note.totals.total).greaterThan(capacity)) {
        throw fail.precondition(
          'credit_exceeds_amount_due',
          `the credit note total ${note.totals.total} exceeds what the invoice still owes (${capacity.toFixed()} ${invoice.currency})`,
        );
      }
      try {
        await this.ctx.write({
          ...invoice,
          credits: [...invoice.credits, { credit_note_id: note.id, amount: note.totals.total, state: 'reserved' }],
        });
        return;
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
      }
    }
    throw new VersionConflict('documents', invoiceId);
  }

  /**
   * Settles the note's reservation by the note's actual state: issued → applied (added if a concurrent
   * issuer of the same note dropped it); not issued and `issuedByUs` false → dropped.
   */
  private async settleCredit(invoiceId: number, noteId: number, issuedByUs: boolean): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const [invoice, note] = await Promise.all([this.ctx.store.documents.get(invoiceId), this.ctx.store.documents.get(noteId)]);
      if (!invoice || !note) return;
      const entry = invoice.credits.find((c) => c.credit_note_id === noteId);
      const issued = note.deleted === null && note.status === 'exposed' && note.invoice_id === invoiceId;
      let next: DocumentRecord;
      if (issued) {
        if (entry?.state === 'applied') return;
        const others = invoice.credits.filter((c) => c.credit_note_id !== noteId);
        next = { ...invoice, credits: [...others, { credit_note_id: noteId, amount: note.totals.total, state: 'applied' }], updated_at: this.ctx.now() };
        next = withEvents(next, this.ctx.events.changed(next, 'updated', ['credited_amount', 'amount_due']));
      } else {
        if (!entry || entry.state === 'applied' || issuedByUs) return;
        next = { ...invoice, credits: invoice.credits.filter((c) => c.credit_note_id !== noteId) };
      }
      try {
        await this.ctx.write(next);
        return;
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
      }
    }
  }

  // ---- invoices -------------------------------------------------------------------------------

  /** exposed → paid (paid_on today when blank); paid → unchanged; draft → 422 (issue it first). */
  async markPaid(tenant: Tenant, id: number, token?: IdempotencyToken): Promise<DocumentView> {
    const written = await this.ctx.change(tenant, 'invoice', id, (doc) => {
      if (appliedUnder(doc, token) || doc.status === 'paid') return null;
      if (doc.status === 'draft') throw fail.precondition('invoice_not_issued', 'a draft invoice cannot be paid; issue it first');
      const next: DocumentRecord = { ...doc, status: 'paid', paid_on: doc.paid_on ?? this.ctx.today(), updated_at: this.ctx.now() };
      return recordedUnder(withEvents(next, this.ctx.events.changed(next, 'paid')), token);
    });
    return this.ctx.view(written);
  }

  /** Under an Idempotency-Key, a retry of a send that happened answers the invoice without mailing again. */
  async send(tenant: Tenant, id: number, input: SendInput, token?: IdempotencyToken): Promise<DocumentView> {
    const written = await this.ctx.change(tenant, 'invoice', id, async (doc) => {
      if (appliedUnder(doc, token)) return null;
      const { locale } = await this.ctx.settings.resolve(tenant.account_id, doc.supplier);
      const mail = resolveMail(doc, input, locale as Locale);
      const at = this.ctx.now();
      const next: DocumentRecord = { ...doc, email_sent_at: at, updated_at: at };
      return recordedUnder(withEvents(next, this.ctx.events.sendRequested(next, mail, at)), token);
    });
    return this.ctx.view(written);
  }

  // ---- proformas ------------------------------------------------------------------------------

  /**
   * Creates the proforma's final invoice, issued, once. Steps, each a single-document write that a
   * retry (or a later call) rolls forward: reserve the invoice id on the proforma → write the draft
   * invoice under that id → issue it → mark the proforma converted.
   */
  async convertProforma(tenant: Tenant, id: number, token?: IdempotencyToken): Promise<DocumentView> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const proforma = await this.ctx.load(tenant, 'proforma', id);
      // A retry of the conversion that converted it (its key is recorded with "converted"): its invoice.
      const converted = appliedUnder(proforma, token) && proforma.conversion ? await this.ctx.store.documents.get(proforma.conversion.invoice_id) : null;
      if (converted) return this.ctx.view(converted);
      if (proforma.status === 'converted') throw fail.precondition('proforma_already_converted', 'this proforma was already converted to an invoice');
      if (proforma.line_items.length === 0) throw fail.precondition('no_line_items', 'a proforma needs line items to be converted');
      let invoiceId = proforma.conversion?.invoice_id ?? 0;
      let invoice = invoiceId ? await this.ctx.store.documents.get(invoiceId) : null;
      if (!invoiceId || invoice?.deleted) {
        // Nothing reserved yet, or an interrupted conversion's invoice was deleted: reserve a new id.
        invoiceId = await this.ctx.store.nextId('documents.document');
        try {
          await this.ctx.write({ ...proforma, conversion: { invoice_id: invoiceId } });
        } catch (err) {
          if (err instanceof VersionConflict) continue;
          throw err;
        }
        invoice = null;
      }
      if (!invoice) invoice = await this.insertDerived(tenant, proforma, invoiceId, 'invoice');
      if (invoice.status === 'draft') {
        const issued = await this.issueRecord(tenant, invoice);
        if (!issued) continue; // deleted meanwhile: start over
        invoice = issued;
      }
      const done = invoice;
      try {
        await this.ctx.change(tenant, 'proforma', id, (p) => {
          if (p.status === 'converted' || p.conversion?.invoice_id !== done.id) return null;
          const next: DocumentRecord = { ...p, status: 'converted', updated_at: this.ctx.now() };
          return recordedUnder(withEvents(next, this.ctx.events.converted(next, done)), token);
        });
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
      }
      return this.ctx.view(done);
    }
    throw new VersionConflict('documents', id);
  }

  /** Writes a draft copy of `source` as `type` under `id` (idempotent: an existing one is returned). */
  private async insertDerived(tenant: Tenant, source: DocumentRecord, id: number, type: DocType, token?: IdempotencyToken): Promise<DocumentRecord> {
    const today = this.ctx.today();
    const at = this.ctx.now();
    const record = newRecord(
      tenant,
      type,
      id,
      {
        purchaser_id: source.purchaser_id,
        purchaser: source.purchaser,
        issue_date: today,
        ...defaultDates(type, today),
        currency: source.currency,
        exchange_rate: source.exchange_rate,
        pdf_language: source.pdf_language,
        variable_symbol: source.variable_symbol,
        bank_account_id: source.bank_account_id,
        bank_account: source.bank_account,
        note: source.note,
        line_items: source.line_items,
        totals: source.totals,
        invoice_id: null,
        paid_on: null,
      },
      source.supplier,
      at,
    );
    Object.assign(record, createdUnder(token));
    record.proforma_id = source.type === 'proforma' ? source.id : null;
    record.quote_id = source.type === 'quote' ? source.id : source.quote_id;
    if (type === 'proforma') {
      const year = Number(today.slice(0, 4));
      const supplier = await this.ctx.directory.supplier(tenant.account_id);
      const { number_format } = await this.ctx.settings.resolve(tenant.account_id, supplier);
      const counter = await this.ctx.store.nextId(`documents.number.${tenant.account_id}.${tenant.livemode ? 'live' : 'test'}.proforma.${year}`);
      record.number = formatNumber(number_format, year, counter);
    }
    // A quote's conversion is this single write, so its event travels here; a proforma's travels with
    // the proforma's own change to converted.
    const events = [this.ctx.events.changed(record, 'created')];
    if (source.type === 'quote') events.push(this.ctx.events.converted(source, record));
    const withCreated = withEvents(record, ...events);
    try {
      return await this.ctx.insert(withCreated);
    } catch (err) {
      if (!(err instanceof DuplicateId)) throw err;
      const existing = await this.ctx.store.documents.get(id);
      if (!existing) throw err;
      return existing;
    }
  }

  // ---- quotes ---------------------------------------------------------------------------------

  /** open → accepted (binding; accepted_at now); accepting again returns the quote unchanged. */
  async acceptQuote(tenant: Tenant, id: number, token?: IdempotencyToken): Promise<DocumentView> {
    const written = await this.ctx.change(tenant, 'quote', id, (doc) => {
      if (appliedUnder(doc, token) || doc.status === 'accepted') return null;
      const at = this.ctx.now();
      const next: DocumentRecord = { ...doc, status: 'accepted', accepted_at: at, updated_at: at };
      return recordedUnder(withEvents(next, this.ctx.events.changed(next, 'accepted')), token);
    });
    return this.ctx.view(written);
  }

  /** A draft invoice or proforma with the accepted quote's content, linked to it. */
  /** Under an Idempotency-Key (stored on the created document), a retry answers the document it created. */
  async convertQuote(tenant: Tenant, id: number, target: DocType, token?: IdempotencyToken): Promise<DocumentView> {
    const quote = await this.ctx.load(tenant, 'quote', id);
    if (quote.status !== 'accepted') throw fail.precondition('quote_not_accepted', 'only an accepted quote can be converted');
    if (target !== 'invoice' && target !== 'proforma') throw fail.invalid('invalid_target', 'a quote converts to an invoice or a proforma', 'target');
    const created = await createOnce(this.ctx.store.documents, tenant, token, async () =>
      this.insertDerived(tenant, quote, await this.ctx.store.nextId('documents.document'), target, token),
    );
    return this.ctx.view(created);
  }
}
