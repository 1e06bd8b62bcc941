// Workflow actions (spec §3): issue, mark_paid, send, convert_to_invoice, accept, quote conversion.
import { checkDeadline } from '../../shared/deadline';
import { fail } from '../../shared/errors';
import { appliedUnder, createdUnder, createOnce, IdempotencyToken, recordedUnder } from '../../shared/idempotency';
import { DuplicateId, VersionConflict } from '../../shared/store/port';
import { Tenant } from '../../shared/tenant';
import { DocType, DocumentRecord } from '../ports/documents-store';
import { defaultDates } from './compose';
import { DocumentsContext, DocumentView, MAX_ATTEMPTS } from './context';
import { insertCounted, newRecord } from './documents';
import { queueEmail } from './email-status';
import { Locale } from './fields';
import { issuable, withEvents } from './records';
import { allowanceResetsAt } from './mail-allowance';
import { checkRecipientCount, resolveMail, SendInput } from './send';

export class Lifecycle {
  constructor(private readonly ctx: DocumentsContext) {}

  // ---- issue (invoices, credit notes, proformas) ---------------------------------------------

  /**
   * Under an Idempotency-Key (recorded with the number), a retry answers the issued document, not
   * not_draft. `deadline`: the caller's (ms since the epoch); passed on to the peers asked for the
   * snapshots, and a draft whose caller gave up is dropped before it queues for a number.
   */
  async issue(tenant: Tenant, type: DocType, id: number, token?: IdempotencyToken, deadline?: number): Promise<DocumentView> {
    if (type === 'proforma') return this.issueProforma(tenant, id, token);
    // Admitted or refused (503 issuing_overloaded) before any of its work: admission.ts.
    return this.ctx.admission.run(deadline, () => this.issueNumbered(tenant, type, id, token, deadline));
  }

  private async issueNumbered(tenant: Tenant, type: DocType, id: number, token?: IdempotencyToken, deadline?: number): Promise<DocumentView> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      checkDeadline(deadline);
      const doc = await this.ctx.load(tenant, type, id);
      // Issued under this key already (also by a concurrent attempt, or rolled forward after a crash).
      if (appliedUnder(doc, token)) return this.ctx.view(doc);
      if (!issuable(doc)) throw fail.precondition('not_draft', `only a draft ${type.replace('_', ' ')} can be issued; this one is ${doc.status}`);
      const issued = await this.issueRecord(tenant, doc, token, deadline);
      if (issued) return this.ctx.view(issued);
      // Not numbered: it stopped being a draft (the next load says so), or changed while it was being
      // numbered (a racing PATCH): then every check runs again on the new content.
    }
    throw new VersionConflict('documents', id);
  }

  /**
   * Issues a draft (credit reservation, numbering, snapshots, credit application); null when it was not
   * numbered because it stopped being a draft or changed meanwhile. Every check is made here, before the
   * numbering queue, on the revision `doc` is at — the number is written only on that revision
   * (numbering.ts): lines, the year (the sequence is chosen by it), a credit note's reservation covering
   * its total (reserved for this very revision's total; reservations only grow while it is a draft).
   * Everything that can happen before the queue does: the snapshots and the number format are read in
   * parallel, outside it.
   */
  private async issueRecord(tenant: Tenant, doc: DocumentRecord, token?: IdempotencyToken, deadline?: number): Promise<DocumentRecord | null> {
    if (doc.line_items.length === 0) throw fail.precondition('no_line_items', 'a document needs at least one line item to be issued');
    const [supplier, found, format] = await Promise.all([
      this.ctx.directory.supplier(tenant.account_id, deadline),
      doc.purchaser_id ? this.ctx.directory.purchaser(tenant, doc.purchaser_id, deadline) : null,
      this.ctx.settings.numberFormat(tenant.account_id),
    ]);
    const purchaser = found ?? doc.purchaser;
    if (doc.type === 'credit_note' && doc.invoice_id) await this.ctx.credits.reserve(tenant, doc, doc.invoice_id, deadline);
    const issued = await this.ctx.numbering.assign(tenant, doc, format, { supplier, purchaser, idempotency: token }, deadline);
    this.ctx.notify();
    return issued;
  }

  // ---- invoices -------------------------------------------------------------------------------

  /**
   * exposed → paid (paid_on today when blank); paid → unchanged; draft → 422 (issue it first). While a
   * credit note is being issued against the invoice (its reservation is not settled) → 422
   * credit_note_pending: what is paid must be what is owed after every credit.
   */
  async markPaid(tenant: Tenant, id: number, token?: IdempotencyToken): Promise<DocumentView> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const doc = await this.ctx.reconcileCredits(await this.ctx.load(tenant, 'invoice', id));
      if (appliedUnder(doc, token) || doc.status === 'paid') return this.ctx.view(doc);
      if (doc.status === 'draft') throw fail.precondition('invoice_not_issued', 'a draft invoice cannot be paid; issue it first');
      const pending = doc.credits.find((c) => c.state === 'reserved');
      if (pending) {
        throw fail.precondition(
          'credit_note_pending',
          `credit note ${pending.credit_note_id} is being issued against this invoice; issue or delete it, then mark the invoice paid`,
        );
      }
      const next: DocumentRecord = { ...doc, status: 'paid', paid_on: doc.paid_on ?? this.ctx.today(), updated_at: this.ctx.now() };
      try {
        return this.ctx.view(await this.ctx.write(recordedUnder(withEvents(next, this.ctx.events.changed(next, 'paid')), token)));
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
      }
    }
    throw new VersionConflict('documents', id);
  }

  /**
   * Under an Idempotency-Key, a retry of a send that happened answers the invoice without mailing again.
   * The recipients are metered before the invoice is written (mail-allowance.ts): 422
   * too_many_recipients above the per-call cap, 402 daily_recipient_limit_reached when today's
   * allowance (`mailRecipientsPerDay`, the plan's) cannot take them — and then nothing is queued: no
   * event, no email_status change. A send that is not written gives its recipients back.
   */
  async send(tenant: Tenant, id: number, input: SendInput, token?: IdempotencyToken, mailRecipientsPerDay?: number): Promise<DocumentView> {
    const current = await this.ctx.load(tenant, 'invoice', id);
    if (appliedUnder(current, token)) return this.ctx.view(current);
    const count = checkRecipientCount(input);
    const allowance = this.ctx.mailAllowance;
    const limit = mailRecipientsPerDay ?? this.ctx.mailRecipientsPerDayDefault;
    const now = new Date(this.ctx.now());
    if (!(await allowance.take(tenant, count, limit, now))) {
      const used = await allowance.used(tenant, now);
      throw fail.planLimit(
        'daily_recipient_limit_reached',
        `this plan allows ${limit} e-mail recipients per day; ${used} used today, this send names ${count}; the allowance resets at ${allowanceResetsAt(now)}; upgrade for more`,
        { feature: 'mail_recipients_per_day', limit: String(limit), used: String(used), resets_at: allowanceResetsAt(now) },
      );
    }
    let writing = false;
    let written: DocumentRecord;
    try {
      written = await this.ctx.change(tenant, 'invoice', id, async (doc) => {
        writing = false;
        if (appliedUnder(doc, token)) return null;
        const { locale } = await this.ctx.settings.resolve(tenant.account_id, doc.supplier);
        const mail = resolveMail(doc, input, locale as Locale);
        const at = now.toISOString();
        const sent: DocumentRecord = { ...doc, email_sent_at: at, updated_at: at };
        const request = this.ctx.events.sendRequested(sent, mail, at);
        writing = true;
        // The latest send is the one email_status follows (an older request's outcome is ignored).
        return recordedUnder(withEvents(queueEmail(sent, request.id), request), token);
      });
    } catch (err) {
      // Refused before the write, or every write lost its compare-and-set: nothing was sent. A store
      // error during the write leaves it unknown whether it landed: keep the recipients counted.
      if (!writing || err instanceof VersionConflict) await allowance.giveBack(tenant, count, now);
      throw err;
    }
    // Sent meanwhile under the same key (a concurrent retry): that send was metered, not this one.
    if (!writing) await allowance.giveBack(tenant, count, now);
    return this.ctx.view(written);
  }

  // ---- proformas ------------------------------------------------------------------------------

  /**
   * open → exposed (issued to the customer for payment): fresh snapshots, issued_at, locked from then
   * on. Proformas keep the number they got at creation (not a tax document).
   */
  private async issueProforma(tenant: Tenant, id: number, token?: IdempotencyToken): Promise<DocumentView> {
    const supplier = await this.ctx.directory.supplier(tenant.account_id);
    const written = await this.ctx.change(tenant, 'proforma', id, async (doc) => {
      if (appliedUnder(doc, token)) return null;
      if (doc.status !== 'open') throw fail.precondition('not_draft', `only an open proforma can be issued; this one is ${doc.status}`);
      if (doc.line_items.length === 0) throw fail.precondition('no_line_items', 'a document needs at least one line item to be issued');
      const purchaser = (doc.purchaser_id ? await this.ctx.directory.purchaser(tenant, doc.purchaser_id) : null) ?? doc.purchaser;
      const at = this.ctx.now();
      const next: DocumentRecord = { ...doc, status: 'exposed', supplier, purchaser, issued_at: at, updated_at: at };
      return recordedUnder(withEvents(next, this.ctx.events.changed(next, 'issued')), token);
    });
    return this.ctx.view(written);
  }

  /** exposed → paid (paid_on today when blank); paid → unchanged; open → 422 (issue it first); converted → 422. */
  async markProformaPaid(tenant: Tenant, id: number, token?: IdempotencyToken): Promise<DocumentView> {
    const written = await this.ctx.change(tenant, 'proforma', id, (doc) => {
      if (appliedUnder(doc, token) || doc.status === 'paid') return null;
      if (doc.status === 'open') throw fail.precondition('proforma_not_issued', 'an open proforma cannot be paid; issue it first');
      if (doc.status === 'converted') {
        throw fail.precondition('proforma_already_converted', 'this proforma was converted; its invoice records the payment');
      }
      const next: DocumentRecord = { ...doc, status: 'paid', paid_on: doc.paid_on ?? this.ctx.today(), updated_at: this.ctx.now() };
      return recordedUnder(withEvents(next, this.ctx.events.changed(next, 'paid')), token);
    });
    return this.ctx.view(written);
  }

  /**
   * Creates the proforma's final invoice, issued (and paid, with the proforma's paid_on, when the
   * proforma was paid), once. Steps, each a single-document write that a retry (or a later call) rolls
   * forward: reserve the invoice id on the proforma → write the draft invoice under that id → issue it →
   * mark it paid if the proforma is → mark the proforma converted, by CAS on the version whose payment
   * state the invoice mirrors (a proforma paid meanwhile goes round again).
   */
  async convertProforma(tenant: Tenant, id: number, token?: IdempotencyToken): Promise<DocumentView> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      let proforma = await this.ctx.load(tenant, 'proforma', id);
      // A retry of the conversion that converted it (its key is recorded with "converted"): its invoice.
      const earlier = appliedUnder(proforma, token) && proforma.conversion ? await this.ctx.store.documents.get(proforma.conversion.invoice_id) : null;
      if (earlier) return this.ctx.view(earlier);
      if (proforma.status === 'converted') throw fail.precondition('proforma_already_converted', 'this proforma was already converted to an invoice');
      if (proforma.line_items.length === 0) throw fail.precondition('no_line_items', 'a proforma needs line items to be converted');
      let invoiceId = proforma.conversion?.invoice_id ?? 0;
      let invoice = invoiceId ? await this.ctx.store.documents.get(invoiceId) : null;
      if (!invoiceId || invoice?.deleted) {
        // Nothing reserved yet, or an interrupted conversion's invoice was deleted: reserve a new id.
        invoiceId = await this.ctx.store.nextId('documents.document');
        try {
          proforma = await this.ctx.write({ ...proforma, conversion: { invoice_id: invoiceId } });
        } catch (err) {
          if (err instanceof VersionConflict) continue;
          throw err;
        }
        invoice = null;
      }
      if (!invoice) invoice = await this.insertDerived(tenant, proforma, invoiceId, 'invoice');
      if (invoice.status === 'draft') {
        const issued = await this.issueRecord(tenant, invoice);
        if (!issued) continue; // deleted or changed meanwhile: start over
        invoice = issued;
      }
      if (proforma.status === 'paid' && invoice.status === 'exposed') {
        const paidOn = proforma.paid_on;
        invoice = await this.ctx.change(tenant, 'invoice', invoice.id, (inv) => {
          if (inv.status !== 'exposed') return null;
          const next: DocumentRecord = { ...inv, status: 'paid', paid_on: paidOn ?? this.ctx.today(), updated_at: this.ctx.now() };
          return withEvents(next, this.ctx.events.changed(next, 'paid'));
        });
      }
      const done = invoice;
      const converted: DocumentRecord = { ...proforma, status: 'converted', updated_at: this.ctx.now() };
      try {
        await this.ctx.write(recordedUnder(withEvents(converted, this.ctx.events.converted(converted, done)), token));
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
        // A concurrent call finished this very conversion: same answer. Otherwise (paid meanwhile) go round.
        const now = await this.ctx.store.documents.get(id);
        if (now?.status === 'converted' && now.conversion?.invoice_id === done.id) return this.ctx.view(done);
        continue;
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
        accounting_currency: source.accounting_currency ?? null,
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
    // A quote's conversion is this single write, so its event travels here; a proforma's travels with
    // the proforma's own change to converted.
    const events = (r: DocumentRecord) => [
      this.ctx.events.changed(r, 'created'),
      ...(source.type === 'quote' ? [this.ctx.events.converted(source, r)] : []),
    ];
    try {
      if (type === 'proforma') {
        const supplier = await this.ctx.directory.supplier(tenant.account_id);
        const { number_format } = await this.ctx.settings.resolve(tenant.account_id, supplier);
        return await insertCounted(this.ctx, tenant, record, number_format, events);
      }
      return await this.ctx.insert(withEvents(record, ...events(record)));
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
