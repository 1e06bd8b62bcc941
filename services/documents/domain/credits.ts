// A credit note's claim on its invoice, made before the note is numbered: Σ credits (applied and
// reserved) + the note's total ≤ the invoice total, and the invoice not paid. The claims on one invoice
// are group-committed (group-commit.ts): the notes waiting for the same invoice are checked in turn
// against the invoice as the earlier ones of the batch leave it, and written with one compare-and-set
// of the invoice — so N concurrent notes cost one invoice write, not N rounds of lost CAS, and exactly
// those that fit are reserved. A reservation only grows while its note is a draft (a smaller one is
// raised, never lowered), and is dropped only once the note is issued or deleted (both final), so a
// number checked against it stays covered whatever another issuer of the same note does.
import { fail } from '../../shared/errors';
import { Decimal } from '../../shared/money';
import { VersionConflict } from '../../shared/store/port';
import { Tenant } from '../../shared/tenant';
import { CreditAllocation, DocumentRecord, DocumentsStore } from '../ports/documents-store';
import { BatchOutcome, GroupCommit } from './group-commit';
import { NumberingHooks } from './numbering';
import { creditCapacity } from './records';

interface Claim {
  tenant: Tenant;
  note: DocumentRecord;
}

const MAX_ATTEMPTS = 50;

/** What reserving needs of the documents context (context.ts): the store, settling reservations, a counted write. */
export interface CreditsDeps {
  store: DocumentsStore;
  reconcileCredits(invoice: DocumentRecord): Promise<DocumentRecord>;
  write(doc: DocumentRecord): Promise<DocumentRecord>;
}

export class CreditReservations {
  private readonly queue: GroupCommit<Claim, void>;

  constructor(private readonly ctx: CreditsDeps, hooks: NumberingHooks = {}) {
    this.queue = new GroupCommit((key, claims) => this.reserveAll(Number(key), claims), {
      maxBatch: hooks.maxBatch ?? 100,
      maxWaiting: hooks.maxWaiting ?? 500,
      overloadCode: 'issuing_overloaded',
    });
  }

  /** Claims `note`'s total (at the revision read) on its invoice; 422 when it does not fit. */
  reserve(tenant: Tenant, note: DocumentRecord, invoiceId: number, deadline?: number): Promise<void> {
    return this.queue.submit(String(invoiceId), { tenant, note }, deadline);
  }

  private async reserveAll(invoiceId: number, claims: Claim[]): Promise<BatchOutcome<void>> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      let invoice = await this.ctx.store.documents.get(invoiceId);
      if (!invoice || invoice.type !== 'invoice' || invoice.deleted !== null) return claims.map(() => ({ error: invoiceNotFound() }));
      invoice = await this.ctx.reconcileCredits(invoice);
      let credits: CreditAllocation[] = invoice.credits;
      const outcome: BatchOutcome<void> = claims.map(({ tenant, note }) => {
        if (invoice!.account_id !== tenant.account_id) return { error: invoiceNotFound() };
        if (invoice!.status === 'draft') return { error: fail.precondition('invoice_not_issued', 'the source invoice is not issued') };
        const entry = credits.find((c) => c.credit_note_id === note.id);
        if (entry && (entry.state === 'applied' || new Decimal(entry.amount).greaterThanOrEqualTo(note.totals.total))) return { ok: undefined };
        const capacity = creditCapacity({ ...invoice!, credits }, note.id);
        if (new Decimal(note.totals.total).greaterThan(capacity)) {
          return {
            error: fail.precondition(
              'credit_exceeds_amount_due',
              `the credit note total ${note.totals.total} exceeds what the invoice still owes (${capacity.toFixed()} ${invoice!.currency})`,
            ),
          };
        }
        credits = [...credits.filter((c) => c.credit_note_id !== note.id), { credit_note_id: note.id, amount: note.totals.total, state: 'reserved' }];
        return { ok: undefined };
      });
      if (credits === invoice.credits) return outcome;
      try {
        await this.ctx.write({ ...invoice, credits });
        return outcome;
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err; // the invoice changed meanwhile: decide again on what it is now
      }
    }
    throw new VersionConflict('documents', invoiceId);
  }
}

const invoiceNotFound = () => fail.precondition('invoice_not_found', 'the source invoice of this credit note no longer exists');
