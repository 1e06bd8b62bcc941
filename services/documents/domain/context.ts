// What the documents use cases share: ports, the event factory, settings, numbering, loading with
// tenant/type isolation, writes that wake the outbox relay, and the read model of a document.
import { fail } from '../../shared/errors';
import { ownedBy, Tenant } from '../../shared/tenant';
import { VersionConflict } from '../../shared/store/port';
import { Clock, Directory, IdSource } from '../ports/directory';
import { DocType, DocumentRecord, DocumentsStore } from '../ports/documents-store';
import { formatMoney } from '../../shared/money';
import { Admission, ADMISSION_DEFAULTS, AdmissionOptions } from './admission';
import { CreditReservations } from './credits';
import { Numbering, NumberingHooks } from './numbering';
import { amountDue, creditedAmount, EventFactory, revisionOf, withEvents } from './records';
import { DEFAULT_MAIL_RECIPIENTS_PER_DAY, MailAllowance, MailAllowanceHooks } from './mail-allowance';
import { Settings } from './settings';

/** Wakes the outbox relay after a write that carries events. */
export interface OutboxSignal {
  notify(): void;
}

export interface DocumentsDeps {
  store: DocumentsStore;
  directory: Directory;
  clock: Clock;
  ids: IdSource;
  signal?: OutboxSignal;
  hooks?: NumberingHooks;
  /** Recipients per workspace per day (send) when the plan sets none (MAIL_RECIPIENTS_PER_DAY_DEFAULT). */
  mailRecipientsPerDayDefault?: number;
  mailAllowanceHooks?: MailAllowanceHooks;
  /** Admission control of issues (admission.ts; ISSUE_ADMIT_* settings). */
  admission?: Partial<AdmissionOptions>;
}

export interface DocumentRef {
  id: number;
  type: DocType;
  number: string | null;
  status: string;
}

export interface DocumentView {
  record: DocumentRecord;
  amount_due: string;
  credited_amount: string;
  /** Credit notes: the source invoice. */
  invoice: DocumentRef | null;
  /** Proformas: invoices issued from it. Quotes: documents created from it. */
  derived: DocumentRef[];
}

export const MAX_ATTEMPTS = 50;

export const ref = (d: DocumentRecord): DocumentRef => ({ id: d.id, type: d.type, number: d.number, status: d.status });

export class DocumentsContext {
  readonly store: DocumentsStore;
  readonly directory: Directory;
  readonly events: EventFactory;
  readonly settings: Settings;
  readonly numbering: Numbering;
  /** Credit notes' claims on their invoices, batched per invoice (credits.ts). */
  readonly credits: CreditReservations;
  /** Which issues start at all, before any of their work (admission.ts). */
  readonly admission: Admission;
  readonly mailAllowance: MailAllowance;
  readonly mailRecipientsPerDayDefault: number;

  constructor(private readonly deps: DocumentsDeps) {
    this.store = deps.store;
    this.directory = deps.directory;
    this.events = new EventFactory(deps.ids, deps.clock);
    this.settings = new Settings(deps.store);
    this.mailAllowance = new MailAllowance(deps.store.mailAllowance, () => deps.store.nextId('mail_recipient_allowance'), deps.mailAllowanceHooks);
    this.mailRecipientsPerDayDefault = deps.mailRecipientsPerDayDefault ?? DEFAULT_MAIL_RECIPIENTS_PER_DAY;
    this.numbering = new Numbering(deps.store, deps.clock, this.events, { completed: (docs) => this.completeIssues(docs) }, deps.hooks);
    this.credits = new CreditReservations(this, deps.hooks);
    this.admission = new Admission({ ...ADMISSION_DEFAULTS, ...deps.admission });
  }

  now(): string {
    return this.deps.clock.now().toISOString();
  }

  today(): string {
    return this.now().slice(0, 10);
  }

  notify(): void {
    this.deps.signal?.notify();
  }

  /** A live document of the tenant and type; 404 for anything else (another type included). */
  async load(tenant: Tenant, type: DocType, id: number): Promise<DocumentRecord> {
    const doc = id > 0 ? await this.store.documents.get(id) : null;
    if (!doc || !ownedBy(doc, tenant) || doc.type !== type || doc.deleted !== null) throw fail.notFound(type.replace('_', ' '));
    return doc;
  }

  async insert(doc: Omit<DocumentRecord, 'version'>): Promise<DocumentRecord> {
    const written = await this.store.documents.insert(doc);
    this.notify();
    return written;
  }

  /** A compare-and-set write of a change: bumps the content revision (see DocumentRecord.revision). */
  async write(doc: DocumentRecord): Promise<DocumentRecord> {
    const written = await this.store.documents.update({ ...doc, revision: revisionOf(doc) + 1 });
    if (written.outbox.length) this.notify();
    return written;
  }

  /**
   * Read-modify-write of one document with compare-and-set: `change` sees the current version and
   * returns the next one (or null to leave it). Retried on a concurrent write.
   */
  async change(
    tenant: Tenant,
    type: DocType,
    id: number,
    change: (doc: DocumentRecord) => DocumentRecord | null | Promise<DocumentRecord | null>,
  ): Promise<DocumentRecord> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const doc = await this.load(tenant, type, id);
      const next = await change(doc);
      if (!next) return doc;
      try {
        return await this.write(next);
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
      }
    }
    throw new VersionConflict('documents', id);
  }

  /**
   * What follows the numbers of a batch, by whoever wrote them: each credit note's credit is applied to
   * its invoice — one settling write per invoice, however many of its notes the batch numbered.
   */
  async completeIssues(docs: DocumentRecord[]): Promise<void> {
    const invoiceIds = new Set(docs.filter((d) => d.type === 'credit_note' && d.invoice_id).map((d) => d.invoice_id!));
    for (const id of invoiceIds) {
      const invoice = await this.store.documents.get(id);
      if (invoice) await this.reconcileCredits(invoice);
    }
  }

  /**
   * Settles an invoice's credit reservations: a reservation whose note is now issued is applied (with
   * the note's total), one whose note is deleted or was issued elsewhere is dropped. A reservation of a
   * draft note is kept — also when the draft was re-linked, since it may be linked back — until that
   * note is issued or deleted: both are final, so a number checked against a reservation (see
   * checkIssue) never finds it dropped under it.
   */
  async reconcileCredits(invoice: DocumentRecord): Promise<DocumentRecord> {
    let current = invoice;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (!current.credits.some((c) => c.state === 'reserved')) return current;
      let applied = false;
      const credits = [];
      for (const credit of current.credits) {
        if (credit.state !== 'reserved') {
          credits.push(credit);
          continue;
        }
        const note = await this.store.documents.get(credit.credit_note_id);
        if (!note || note.deleted !== null) continue;
        if (note.status === 'draft') credits.push(credit);
        else if (note.invoice_id === current.id) {
          credits.push({ ...credit, amount: note.totals.total, state: 'applied' as const });
          applied = true;
        }
      }
      if (credits.length === current.credits.length && !applied) return current;
      let next: DocumentRecord = { ...current, credits, updated_at: this.now() };
      if (applied) next = withEvents(next, this.events.changed(next, 'updated', ['credited_amount', 'amount_due']));
      try {
        return await this.write(next);
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
        const fresh = await this.store.documents.get(current.id);
        if (!fresh) return current;
        current = fresh;
      }
    }
    return current;
  }

  async view(doc: DocumentRecord): Promise<DocumentView> {
    let invoice: DocumentRef | null = null;
    let derived: DocumentRef[] = [];
    if (doc.type === 'credit_note' && doc.invoice_id) {
      const source = await this.store.documents.get(doc.invoice_id);
      if (source && source.account_id === doc.account_id && source.livemode === doc.livemode) invoice = ref(source);
    }
    if (doc.type === 'proforma' || doc.type === 'quote') {
      const link = doc.type === 'proforma' ? 'proforma_id' : 'quote_id';
      const rows = await this.store.documents.list({
        where: { account_id: doc.account_id, livemode: doc.livemode, [link]: doc.id, deleted: null },
        limit: 100,
      });
      derived = rows.filter((r) => doc.type === 'quote' || r.type === 'invoice').map(ref);
    }
    return {
      record: doc,
      amount_due: amountDue(doc),
      credited_amount: formatMoney(creditedAmount(doc), doc.currency),
      invoice,
      derived,
    };
  }
}
