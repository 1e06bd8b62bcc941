// Document CRUD (spec §4): list, create, read, partial update and soft delete, per type.
import { fail } from '../../shared/errors';
import { createdUnder, createOnce, IdempotencyToken } from '../../shared/idempotency';
import { UniqueViolation } from '../../shared/store/port';
import { Tenant } from '../../shared/tenant';
import { DocType, DocumentRecord, NUMBER_TEXT_KEY, OutboxEntry } from '../ports/documents-store';
import { ComposedFields, compose } from './compose';
import { DocumentsContext, DocumentView } from './context';
import { DocumentInput } from './fields';
import { formatNumber } from './number-format';
import { INITIAL_STATUS, isLocked, PRINTED_FIELDS, withEvents } from './records';

const COMPOSED_KEYS: Array<keyof ComposedFields> = [
  'purchaser_id', 'purchaser', 'issue_date', 'due_date', 'delivery_date', 'currency', 'exchange_rate', 'pdf_language', 'variable_symbol',
  'bank_account_id', 'bank_account', 'note', 'line_items', 'totals', 'invoice_id', 'paid_on', 'buyer_reference', 'order_reference',
  'contract_reference', 'accounting_currency',
];
/** Snapshots and totals follow the fields they derive from; they are not reported as changed on their own. */
const DERIVED_KEYS = new Set<keyof ComposedFields>(['purchaser', 'bank_account', 'totals', 'accounting_currency']);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export class Documents {
  constructor(private readonly ctx: DocumentsContext) {}

  async list(tenant: Tenant, type: DocType, limit: number, afterId?: number): Promise<DocumentView[]> {
    const rows = await this.ctx.store.documents.list({
      where: { account_id: tenant.account_id, livemode: tenant.livemode, type, deleted: null },
      after: afterId ? [afterId] : undefined,
      limit,
    });
    return Promise.all(rows.map((row) => this.ctx.view(row)));
  }

  async get(tenant: Tenant, type: DocType, id: number): Promise<DocumentView> {
    let doc = await this.ctx.load(tenant, type, id);
    if (type === 'invoice') doc = await this.ctx.reconcileCredits(doc);
    return this.ctx.view(doc);
  }

  /** Under an Idempotency-Key, a retry answers the document the first attempt created. */
  async create(tenant: Tenant, type: DocType, input: DocumentInput, token?: IdempotencyToken): Promise<DocumentView> {
    return this.ctx.view(await createOnce(this.ctx.store.documents, tenant, token, () => this.createNew(tenant, type, input, token)));
  }

  private async createNew(tenant: Tenant, type: DocType, input: DocumentInput, token: IdempotencyToken | undefined): Promise<DocumentRecord> {
    const supplier = await this.ctx.directory.supplier(tenant.account_id);
    const settings = await this.ctx.settings.resolve(tenant.account_id, supplier);
    const fields = await compose(this.ctx, tenant, type, null, input, settings);
    const id = await this.ctx.store.nextId('documents.document');
    const at = this.ctx.now();
    const record: DocumentRecord = { ...newRecord(tenant, type, id, fields, supplier, at), ...createdUnder(token) };
    // Proformas and quotes are not tax documents: numbered at creation from a plain counter per year.
    if (type === 'proforma' || type === 'quote') {
      return insertCounted(this.ctx, tenant, record, settings.number_format, (r) => [this.ctx.events.changed(r, 'created')]);
    }
    return this.ctx.insert(withEvents(record, this.ctx.events.changed(record, 'created')));
  }

  async update(tenant: Tenant, type: DocType, id: number, input: DocumentInput): Promise<DocumentView> {
    const written = await this.ctx.change(tenant, type, id, async (doc) => {
      const settings = await this.ctx.settings.resolve(tenant.account_id, doc.supplier);
      const fields = await compose(this.ctx, tenant, type, doc, input, settings);
      if (isLocked(doc)) {
        // The snapshots are frozen with the ids they copy: an unchanged purchaser_id sent back must
        // not re-copy today's contact onto a binding document.
        fields.purchaser = doc.purchaser;
        fields.bank_account = doc.bank_account;
        // What exchange_rate converted to when it was issued, whatever the workspace currency is now.
        fields.accounting_currency = doc.accounting_currency ?? null;
      }
      // A field a record predates (absent) equals null (buyer_reference & co. on older invoices).
      const changed = COMPOSED_KEYS.filter((k) => !same(fields[k] ?? null, doc[k] ?? null));
      if (isLocked(doc)) {
        const locked = PRINTED_FIELDS.find((k) => changed.includes(k));
        if (locked) {
          throw fail.invalid('document_locked', `${locked} cannot change once the ${type.replace('_', ' ')} is ${doc.status}`, locked);
        }
      }
      const reported = changed.filter((k) => !DERIVED_KEYS.has(k));
      if (changed.length === 0) return null;
      const next: DocumentRecord = { ...doc, ...fields, updated_at: this.ctx.now() };
      return withEvents(next, this.ctx.events.changed(next, 'updated', reported));
    });
    return this.ctx.view(written);
  }

  async delete(tenant: Tenant, type: DocType, id: number): Promise<void> {
    await this.ctx.change(tenant, type, id, async (doc) => {
      await this.refuseDeletion(tenant, doc);
      const next: DocumentRecord = { ...doc, deleted: this.ctx.now(), updated_at: this.ctx.now() };
      return withEvents(next, this.ctx.events.changed(next, 'deleted'));
    });
  }

  /** The refusals of spec §4 (422). */
  private async refuseDeletion(tenant: Tenant, doc: DocumentRecord): Promise<void> {
    if (doc.type === 'invoice' && doc.status === 'paid') {
      throw fail.precondition('invoice_has_payments', 'a paid invoice cannot be deleted');
    }
    if (doc.type === 'proforma' && doc.status === 'paid') {
      throw fail.precondition('proforma_has_payments', 'a paid proforma cannot be deleted');
    }
    // Its credit notes would point at nothing and could never be deleted themselves. Credit
    // reservations and this refusal are both writes of the invoice (CAS): no credit slips past it.
    if (doc.type === 'invoice' && (await this.ctx.reconcileCredits(doc)).credits.length > 0) {
      throw fail.precondition('invoice_has_credit_notes', 'credit notes were issued against this invoice; it cannot be deleted');
    }
    if (doc.type === 'credit_note' && doc.status !== 'draft' && doc.invoice_id) {
      const invoice = await this.ctx.store.documents.get(doc.invoice_id);
      const settled = invoice ? await this.ctx.reconcileCredits(invoice) : null;
      if (settled?.credits.some((c) => c.credit_note_id === doc.id && c.state === 'applied')) {
        throw fail.precondition('credit_note_applied', 'this credit note is applied to its invoice and cannot be deleted');
      }
    }
    if (doc.type === 'proforma') {
      const downstream = await this.ctx.store.documents.findOne({
        account_id: tenant.account_id,
        livemode: tenant.livemode,
        proforma_id: doc.id,
        deleted: null,
      });
      // A conversion in flight (reserved, invoice not written yet) counts as downstream too.
      const reserved = doc.conversion ? await this.ctx.store.documents.get(doc.conversion.invoice_id) : null;
      if (downstream || (doc.conversion && reserved?.deleted == null)) {
        throw fail.precondition('proforma_has_invoices', 'invoices were issued from this proforma; delete them first');
      }
    }
  }
}

export function newRecord(tenant: Tenant, type: DocType, id: number, fields: ComposedFields, supplier: DocumentRecord['supplier'], at: string): DocumentRecord {
  return {
    id,
    version: 0,
    account_id: tenant.account_id,
    livemode: tenant.livemode,
    type,
    status: INITIAL_STATUS[type],
    number: null,
    sequence_year: null,
    sequence_number: null,
    supplier,
    ...fields,
    email_sent_at: null,
    accepted_at: null,
    issued_at: null,
    proforma_id: null,
    quote_id: null,
    credits: [],
    conversion: null,
    created_at: at,
    updated_at: at,
    deleted: null,
    outbox: [],
    outbox_pending: null,
  };
}

/**
 * Inserts a proforma or quote numbered from its plain per-year counter (gaps allowed: not tax
 * documents). A number text another document of the type already has (another number format printed
 * it) is skipped.
 */
export async function insertCounted(
  ctx: DocumentsContext,
  tenant: Tenant,
  record: DocumentRecord,
  format: string,
  events: (numbered: DocumentRecord) => OutboxEntry[],
): Promise<DocumentRecord> {
  const year = Number(record.issue_date.slice(0, 4));
  const counter = `documents.number.${tenant.account_id}.${tenant.livemode ? 'live' : 'test'}.${record.type}.${year}`;
  for (let attempt = 0; ; attempt++) {
    const numbered = { ...record, number: formatNumber(format, year, await ctx.store.nextId(counter)) };
    try {
      return await ctx.insert(withEvents(numbered, ...events(numbered)));
    } catch (err) {
      if (!(err instanceof UniqueViolation) || !err.key.startsWith(NUMBER_TEXT_KEY) || attempt >= 20) throw err;
    }
  }
}
