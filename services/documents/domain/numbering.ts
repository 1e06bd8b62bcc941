// Gapless, strictly increasing numbers per (workspace, livemode, type, year) with single-document
// atomicity only, safe across replicas and crashes:
//
//   1. reserve: CAS the sequence record from {last: n-1, pending: null} to {last: n, pending: {doc, n}}
//   2. apply:   CAS the document from draft to exposed carrying number n        (applyIssue, pure)
//   3. release: CAS the sequence record back to pending: null
//
// While a sequence holds a pending number nobody else can reserve; whoever finds one settles it first:
// if the document already carries it, release; if the document is still issuable, apply it (roll
// forward); otherwise (deleted, issued with another number, or changed since) give the number back by
// CAS {last: n-1, pending: null} (roll back).
//
// The issuer checks the draft (lines, the year of its issue_date, a credit note's reservation on its
// invoice: IssueRules.check) at one content revision and the pending number records that revision;
// the number is written only on that very revision. "Issuable at revision r" is monotonic (revisions
// only grow, a draft that stopped being one never becomes one again), so every check holds for the
// version written, whoever writes it, and a rolled-back number can never be written later: no gap, no
// duplicate, whichever step a process dies after. Whoever writes the number also runs what follows an
// issue (IssueRules.completed: a credit note's credit on its invoice), so a roll-forward completes
// everything issuing does. Unique keys on (type, year, counter) and on the number text are the last
// safety nets.
import { fail } from '../../shared/errors';
import { IdempotencyToken } from '../../shared/idempotency';
import { Tenant } from '../../shared/tenant';
import { DuplicateId, UniqueViolation, VersionConflict } from '../../shared/store/port';
import { Clock } from '../ports/directory';
import { DocType, DocumentRecord, DocumentsStore, NUMBER_TEXT_KEY, PartyData, PendingNumber, SequenceRecord } from '../ports/documents-store';
import { formatNumber } from './number-format';
import { applyIssue, EventFactory, issuable, revisionOf } from './records';

export interface NumberingHooks {
  /** Runs between reserve and apply; tests throw here to simulate a process dying mid-issue, or pause to race it. */
  afterReserve?(pending: PendingNumber): Promise<void>;
  /**
   * How long another issuer's pending number is left to its owner before it is settled for it
   * (a crashed owner never completes). Default 1000 ms.
   */
  pendingGraceMs?: number;
}

/** What the issuer hands to the number's document: party snapshots and the issue request's key. */
export interface Snapshots {
  supplier: PartyData;
  purchaser: PartyData | null;
  idempotency?: IdempotencyToken;
}

/** What issuing a document requires and entails beyond its number (the lifecycle's rules). */
export interface IssueRules {
  /**
   * Checks the draft about to be numbered (throws a DomainError to refuse); false: a precondition
   * that the issuer establishes is missing (a credit reservation), so the issuer must redo it.
   */
  check(doc: DocumentRecord): Promise<boolean>;
  /** Runs after the number is written, by whoever wrote it (issuer or a roll-forward). */
  completed(doc: DocumentRecord): Promise<void>;
}

const yearOf = (doc: DocumentRecord) => Number(doc.issue_date.slice(0, 4));

const MAX_ATTEMPTS = 2000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A short random wait, so contending replicas do not retry in lockstep. */
const jitter = (base: number) => pause(base + Math.floor(Math.random() * base * 2));

export class Numbering {
  /** Issues of one sequence run one at a time within a process; replicas contend through the store. */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly store: DocumentsStore,
    private readonly clock: Clock,
    private readonly events: EventFactory,
    private readonly rules: IssueRules,
    private readonly hooks: NumberingHooks = {},
  ) {}

  /** The sequence record of (tenant, type, year), created on first use. */
  async sequence(tenant: Tenant, type: DocType, year: number): Promise<SequenceRecord> {
    const where = { account_id: tenant.account_id, livemode: tenant.livemode, type, year };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const found = await this.store.sequences.findOne(where);
      if (found) return found;
      try {
        return await this.store.sequences.insert({
          id: await this.store.nextId('documents.sequence'),
          ...where,
          last: 0,
          pending: null,
          updated_at: this.clock.now().toISOString(),
        });
      } catch (err) {
        if (!(err instanceof UniqueViolation) && !(err instanceof DuplicateId)) throw err;
        await pause(5 + attempt); // another issuer is creating it; read it back
      }
    }
    throw new VersionConflict('document_sequences', 0);
  }

  /**
   * Gives `documentId` the next number of its (type, year) sequence and writes it with the issue
   * transition. Returns the issued document, or null when the document is not issuable (any more) or
   * changed meanwhile (the caller re-reads it and tries again).
   */
  async assign(
    tenant: Tenant,
    documentId: number,
    format: string,
    snapshots: Snapshots,
  ): Promise<DocumentRecord | null> {
    const doc = await this.store.documents.get(documentId);
    if (!doc || !issuable(doc)) return null;
    const key = `${tenant.account_id}:${tenant.livemode}:${doc.type}:${doc.issue_date.slice(0, 4)}`;
    return this.exclusive(key, () => this.reserveAndApply(tenant, documentId, format, snapshots));
  }

  private async exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    let done!: () => void;
    const gate = new Promise<void>((resolve) => (done = resolve));
    const mine = previous.then(() => gate);
    this.queues.set(key, mine);
    await previous;
    try {
      return await work();
    } finally {
      done();
      if (this.queues.get(key) === mine) this.queues.delete(key);
    }
  }

  private async reserveAndApply(
    tenant: Tenant,
    documentId: number,
    format: string,
    snapshots: Snapshots,
  ): Promise<DocumentRecord | null> {
    const grace = this.hooks.pendingGraceMs ?? 1000;
    const first = await this.store.documents.get(documentId);
    if (!first || !issuable(first)) return null;
    const year = Number(first.issue_date.slice(0, 4));
    const { id: sequenceId } = await this.sequence(tenant, first.type, year);
    let waited = false;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const seq = (await this.store.sequences.get(sequenceId))!;
      if (seq.pending) {
        // Another replica is issuing: leave it time to finish before settling its number for it.
        const age = this.clock.now().getTime() - Date.parse(seq.pending.reserved_at);
        if (seq.pending.document_id !== documentId && age >= 0 && age < grace) {
          waited = true;
          await jitter(4);
          continue;
        }
        // Settle an interrupted issue; when it was this very document, that completes it.
        const settled = await this.settle(seq);
        if (settled?.id === documentId) return settled;
        continue;
      }
      const doc = attempt === 0 && !waited ? first : await this.store.documents.get(documentId);
      if (!doc || !issuable(doc)) return null;
      // issue_date moved to another year since the sequence was chosen: start over in that year's.
      if (yearOf(doc) !== year) return null;
      if (!(await this.rules.check(doc))) return null;
      const number = seq.last + 1;
      const formatted = formatNumber(format, year, number);
      const pending: PendingNumber = {
        document_id: doc.id,
        year,
        number,
        formatted,
        revision: revisionOf(doc),
        reserved_at: this.clock.now().toISOString(),
        supplier: snapshots.supplier,
        purchaser: snapshots.purchaser,
        idempotency: snapshots.idempotency ?? null,
      };
      let reserved: SequenceRecord;
      try {
        reserved = await this.store.sequences.update({ ...seq, last: number, pending, updated_at: this.clock.now().toISOString() });
      } catch (err) {
        if (err instanceof VersionConflict) {
          await jitter(2);
          continue;
        }
        throw err;
      }
      await this.hooks.afterReserve?.(pending);
      return this.settle(reserved);
    }
    throw new VersionConflict('document_sequences', documentId);
  }

  /** Completes or gives back the sequence's pending number; returns the document if it got the number. */
  async settle(seq: SequenceRecord): Promise<DocumentRecord | null> {
    const p = seq.pending;
    if (!p) return null;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const doc = await this.store.documents.get(p.document_id);
      if (doc && doc.type === seq.type && doc.sequence_year === p.year && doc.sequence_number === p.number) {
        await this.release(seq, p, false);
        return doc;
      }
      if (doc && doc.type === seq.type && this.appliesTo(doc, p)) {
        let written: DocumentRecord;
        try {
          written = await this.store.documents.update(applyIssue(doc, p, this.clock.now().toISOString(), this.events));
        } catch (err) {
          if (err instanceof VersionConflict) continue;
          if (!(err instanceof UniqueViolation) || !err.key.startsWith(NUMBER_TEXT_KEY)) throw err;
          // Two number formats can print the same text (YYN in 2012 and NYY in 2021 both give "121").
          // The text is taken for good (numbers are never freed): give the counter back, refuse.
          await this.release(seq, p, true);
          throw numberTaken(p.formatted);
        }
        await this.release(seq, p, false);
        await this.rules.completed(written);
        return written;
      }
      await this.release(seq, p, true);
      return null;
    }
    throw new VersionConflict('documents', p.document_id);
  }

  /** The pending number may be written on `doc`: still the draft, at the revision its issuer checked. */
  private appliesTo(doc: DocumentRecord, p: PendingNumber): boolean {
    return issuable(doc) && yearOf(doc) === p.year && (p.revision === undefined || revisionOf(doc) === p.revision);
  }

  private async release(seq: SequenceRecord, p: PendingNumber, rollback: boolean): Promise<void> {
    let current: SequenceRecord | null = seq;
    for (let attempt = 0; attempt < MAX_ATTEMPTS && current; attempt++) {
      const held = current.pending;
      if (!held || held.document_id !== p.document_id || held.number !== p.number) return; // settled by someone else
      try {
        await this.store.sequences.update({
          ...current,
          last: rollback ? current.last - 1 : current.last,
          pending: null,
          updated_at: this.clock.now().toISOString(),
        });
        return;
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
        current = await this.store.sequences.get(seq.id);
      }
    }
  }
}

const numberTaken = (formatted: string) =>
  fail.precondition('number_taken', `the number format yields ${formatted}, which another document already has; change the number format`);
