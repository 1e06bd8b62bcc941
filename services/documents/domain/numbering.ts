// Gapless, strictly increasing numbers per (workspace, livemode, type, year) with single-document
// atomicity only, safe across replicas and crashes, issued in batches (group commit):
//
//   1. reserve:  CAS the sequence record {last: L, pending: none} → {last: L+k, pending: [p1 … pk]},
//                pi = {document di, number L+i, the revision of di its issuer checked, snapshots, …}
//   2. apply:    in number order, CAS each document from its draft at that revision to exposed with its
//                number (applyIssue, pure)                                   — one write per document
//   3. release:  CAS the sequence back to pending: none
//
// If pi cannot be applied (its draft changed, was deleted or issued otherwise, or its number text is
// taken), the sequence is compacted before anything after pi is written: one CAS drops p1 … pi and
// renumbers the rest down by one (last − 1), and the walk goes on with what is left. An entry leaves
// the pending list only once it is applied or can never be applied — "draft at revision r" is
// monotonic (revisions only grow; a draft that stopped being one never becomes one again), and so is
// "carries number n". So whoever walks the list — the issuer, or anyone who finds it after a crash —
// writes the same numbers, and a walker holding a stale list can never write a stale number: to get
// past the entry that was dropped it would have to find that entry's document carrying the dropped
// number, which by then belongs to the next entry. No gap, no duplicate, whichever step a process
// dies after; every CAS of the sequence is the arbiter when two walk at once.
//
// The issuer checks the draft (lines, the year of its issue_date, a credit note's reservation on its
// invoice) *before* it queues, on the revision it read; the pending number records that revision and
// is written only on it. So every check holds for the version written, and nothing but the two
// sequence writes and one write per document happens inside the queue. Whoever writes a number also
// runs what follows an issue (IssueRules.completed: a credit note's credit on its invoice), so a
// roll-forward completes everything issuing does. Unique keys on (type, year, counter) and on the
// number text are the last safety nets.
//
// Within a process, issues of one sequence wait in a group-commit queue (group-commit.ts): whoever
// finds it idle takes every waiting draft as one batch. Replicas contend through the store: a list
// pending from another replica is left to it for a grace period, then walked for it.
import { fail } from '../../shared/errors';
import { IdempotencyToken } from '../../shared/idempotency';
import { Tenant } from '../../shared/tenant';
import { DuplicateId, UniqueViolation, VersionConflict } from '../../shared/store/port';
import { Clock } from '../ports/directory';
import { DocType, DocumentRecord, DocumentsStore, NUMBER_TEXT_KEY, PartyData, PendingNumber, SequenceRecord } from '../ports/documents-store';
import { BatchOutcome, GroupCommit } from './group-commit';
import { formatNumber } from './number-format';
import { applyIssue, EventFactory, issuable, revisionOf } from './records';

export interface NumberingHooks {
  /** Awaited before a batch is formed; tests hold it until the drafts they race have queued. */
  beforeBatch?(key: string, waiting: number): Promise<void>;
  /** Called when a draft joined its sequence's queue, with how many wait now. */
  queued?(key: string, waiting: number): void;
  /** Runs between reserve and the first apply; tests throw here to simulate a process dying, or pause to race it. */
  afterReserve?(batch: PendingNumber[]): Promise<void>;
  /** Runs after each number written on its document (a crash here leaves the rest of the batch pending). */
  afterApply?(pending: PendingNumber): Promise<void>;
  /** Runs after the sequence was released, before what follows the issue (credit application). */
  afterRelease?(batch: PendingNumber[]): Promise<void>;
  /**
   * How long another issuer's pending list is left to its owner before it is walked for it (a crashed
   * owner never completes); grows by 20 ms per pending number. Default 1000 ms.
   */
  pendingGraceMs?: number;
  /** Most drafts one batch numbers (ISSUE_BATCH_MAX, default 100). */
  maxBatch?: number;
  /** Most drafts waiting per sequence in one process; more get 503 issuing_overloaded (ISSUE_QUEUE_MAX, default 500). */
  maxWaiting?: number;
}

/** What the issuer hands to the number's document: party snapshots and the issue request's key. */
export interface Snapshots {
  supplier: PartyData;
  purchaser: PartyData | null;
  idempotency?: IdempotencyToken;
}

/** What issuing entails beyond the number: run after a batch by whoever wrote the numbers. */
export interface IssueRules {
  completed(docs: DocumentRecord[]): Promise<void>;
}

interface IssueRequest {
  tenant: Tenant;
  /** The draft as its issuer read and checked it: the number is written on this revision only. */
  doc: DocumentRecord;
  format: string;
  snapshots: Snapshots;
}

/** What one walk of a pending list did to each document of it: numbered (the document), or not (null / the refusal). */
type Outcome = DocumentRecord | null | Error;

const yearOf = (doc: DocumentRecord) => Number(doc.issue_date.slice(0, 4));

/** The numbers a sequence record holds pending (a record written before batches holds one, or none). */
export function pendingOf(seq: SequenceRecord): PendingNumber[] {
  if (!seq.pending) return [];
  return Array.isArray(seq.pending) ? seq.pending : [seq.pending];
}

const MAX_ATTEMPTS = 2000;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A short random wait, so contending replicas do not retry in lockstep. */
const jitter = (base: number) => pause(base + Math.floor(Math.random() * base * 2));

export class Numbering {
  private readonly queue: GroupCommit<IssueRequest, DocumentRecord | null>;
  /** Sequence record ids by queue key: they never change once created. */
  private readonly sequenceIds = new Map<string, number>();
  /** The sequence record as this process last wrote it: the next batch tries its CAS on it without a read. */
  private readonly lastSeen = new Map<string, SequenceRecord>();

  constructor(
    private readonly store: DocumentsStore,
    private readonly clock: Clock,
    private readonly events: EventFactory,
    private readonly rules: IssueRules,
    private readonly hooks: NumberingHooks = {},
  ) {
    this.queue = new GroupCommit((key, items) => this.runBatch(key, items), {
      maxBatch: hooks.maxBatch ?? 100,
      maxWaiting: hooks.maxWaiting ?? 500,
      overloadCode: 'issuing_overloaded',
      beforeBatch: hooks.beforeBatch,
      queued: hooks.queued,
    });
  }

  /** Drafts waiting to be numbered in this process for the sequence of `doc`. */
  waiting(tenant: Tenant, doc: DocumentRecord): number {
    return this.queue.waiting(keyOf(tenant, doc));
  }

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
   * Gives `doc` — a draft its caller read and checked (lines, year, credit reservation) — the next
   * number of its (type, year) sequence, written on that very revision with the issue transition.
   * Returns the issued document, or null when it was not numbered because it stopped being that
   * draft (the caller re-reads it and tries again). `deadline`: the caller's; a draft whose caller
   * gave up is dropped before it costs a store round trip.
   */
  assign(tenant: Tenant, doc: DocumentRecord, format: string, snapshots: Snapshots, deadline?: number): Promise<DocumentRecord | null> {
    if (!issuable(doc)) return Promise.resolve(null);
    return this.queue.submit(keyOf(tenant, doc), { tenant, doc, format, snapshots }, deadline);
  }

  private async sequenceId(key: string, tenant: Tenant, type: DocType, year: number): Promise<number> {
    let id = this.sequenceIds.get(key);
    if (id === undefined) this.sequenceIds.set(key, (id = (await this.sequence(tenant, type, year)).id));
    return id;
  }

  /** One batch: reserve a range for every draft, walk it (apply, compact), release; then what follows. */
  private async runBatch(key: string, items: IssueRequest[]): Promise<BatchOutcome<DocumentRecord | null>> {
    // The same draft twice (two concurrent requests) takes one number; both get its outcome.
    const requests = [...new Map(items.map((item) => [item.doc.id, item])).values()];
    const { tenant, doc: first } = requests[0];
    const year = yearOf(first);
    const sequenceId = await this.sequenceId(key, tenant, first.type, year);
    const known = new Map(requests.map((r) => [r.doc.id, r.doc]));
    const mine = new Set(known.keys());
    const results = new Map<number, Outcome>();
    const written: DocumentRecord[] = [];
    const collect = (walk: Walk) => {
      for (const [id, outcome] of walk.results) if (mine.has(id)) results.set(id, outcome);
      written.push(...walk.written);
    };
    let seq = this.lastSeen.get(key) ?? (await this.get(sequenceId));
    this.lastSeen.delete(key);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const held = pendingOf(seq);
      if (held.length) {
        // Another replica is issuing: leave it time to finish before walking its list for it; a list
        // holding one of these very drafts (an interrupted earlier attempt) is completed at once.
        const age = this.clock.now().getTime() - Date.parse(held[0].reserved_at);
        const grace = this.graceMs(held.length);
        if (!held.some((p) => mine.has(p.document_id)) && age >= 0 && age < grace) {
          await jitter(Math.min(50, 2 + held.length));
          seq = await this.get(sequenceId);
          continue;
        }
        const walk = await this.walk(seq, known);
        collect(walk);
        seq = walk.seq;
        continue;
      }
      const unnumbered = requests.filter((r) => !results.has(r.doc.id));
      if (!unnumbered.length) break;
      const reservedAt = this.clock.now().toISOString();
      const batch = unnumbered.map((r, i): PendingNumber => pendingFor(r, year, seq.last + i + 1, reservedAt));
      try {
        seq = await this.store.sequences.update({ ...seq, last: seq.last + batch.length, pending: batch, updated_at: reservedAt });
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
        seq = await this.get(sequenceId);
        continue;
      }
      await this.hooks.afterReserve?.(batch);
      const walk = await this.walk(seq, known);
      collect(walk);
      seq = walk.seq;
    }
    if (!pendingOf(seq).length) this.lastSeen.set(key, seq);
    // What follows the issue (credits onto invoices) runs outside the queue; each issuer answers once it is done.
    const completion = written.length ? this.rules.completed(written) : Promise.resolve();
    completion.catch(() => undefined); // awaited through each issuer's answer; never unhandled
    return items.map((item) => {
      const outcome = results.get(item.doc.id) ?? null;
      return outcome instanceof Error ? { error: outcome } : { ok: completion.then(() => outcome) };
    });
  }

  /** How long a pending list of `length` numbers is left to its owner (who renews it while it works). */
  private graceMs(length: number): number {
    return (this.hooks.pendingGraceMs ?? 1000) + 20 * length;
  }

  private async get(sequenceId: number): Promise<SequenceRecord> {
    const seq = await this.store.sequences.get(sequenceId);
    if (!seq) throw new Error(`document sequence ${sequenceId} vanished`);
    return seq;
  }

  /**
   * Applies a sequence's pending numbers in order, compacting past any that cannot be applied, until
   * the sequence is released (or another walker changed it: then what is pending now is walked).
   */
  private async walk(start: SequenceRecord, known: Map<number, DocumentRecord>): Promise<Walk> {
    const results = new Map<number, Outcome>();
    const written: DocumentRecord[] = [];
    let seq = start;
    for (let round = 0; round < MAX_ATTEMPTS; round++) {
      const list = pendingOf(seq);
      if (!list.length) return { seq, results, written };
      let failed = -1;
      let beat = -1;
      const since = Date.now();
      for (let i = 0; i < list.length && failed < 0 && beat < 0; i++) {
        const p = list[i];
        const outcome = await this.applyOne(seq.type, p, known, written);
        results.set(p.document_id, outcome);
        // An entry is done only when its document carries its number; a document answered as issued from
        // the entry under another number (numberedFrom) leaves this number unwritten: compacted away.
        if (outcome instanceof Error || outcome === null || !carries(outcome, p)) failed = i;
        else {
          await this.hooks.afterApply?.(p);
          // A long batch (a slow store) says it is alive, so other replicas keep waiting instead of
          // walking it too: the applied entries leave the list and the rest's reserved_at is renewed.
          if (i < list.length - 1 && Date.now() - since > this.graceMs(list.length) / 3) beat = i;
        }
      }
      const at = this.clock.now().toISOString();
      try {
        if (beat >= 0) {
          const rest = list.slice(beat + 1).map((p) => ({ ...p, reserved_at: at }));
          seq = await this.store.sequences.update({ ...seq, pending: rest, updated_at: at });
          continue;
        }
        if (failed < 0) {
          seq = await this.store.sequences.update({ ...seq, pending: null, updated_at: at });
          await this.hooks.afterRelease?.(list);
          return { seq, results, written };
        }
        seq = await this.store.sequences.update(compacted(seq, list, failed, at));
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
        seq = await this.get(seq.id); // another walker got there first: walk what is pending now
      }
    }
    throw new VersionConflict('document_sequences', start.id);
  }

  /** Writes `p` on its document; the document when it carries the number, null or the refusal when it never can. */
  private async applyOne(type: DocType, p: PendingNumber, known: Map<number, DocumentRecord>, written: DocumentRecord[]): Promise<Outcome> {
    let doc = known.get(p.document_id) ?? (await this.store.documents.get(p.document_id));
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (!doc || doc.type !== type) return null;
      if (carries(doc, p)) return doc;
      // Numbered from this very entry by another walker, at the number a compaction gave it: the issue
      // its caller asked for happened (on the revision it checked), so it is answered, not refused.
      if (numberedFrom(doc, p)) return doc;
      if (!appliesTo(doc, p)) return null;
      try {
        const issued = await this.store.documents.update(applyIssue(doc, p, this.clock.now().toISOString(), this.events));
        known.set(issued.id, issued);
        written.push(issued);
        return issued;
      } catch (err) {
        if (err instanceof UniqueViolation && err.key.startsWith(NUMBER_TEXT_KEY)) {
          // Two number formats can print the same text (YYN in 2012 and NYY in 2021 both give "121").
          // The text is taken for good (numbers are never freed): this number can never be written.
          return numberTaken(p.formatted);
        }
        if (!(err instanceof VersionConflict)) throw err;
        doc = await this.store.documents.get(p.document_id); // the stored version moved on: look again
      }
    }
    throw new VersionConflict('documents', p.document_id);
  }
}

interface Walk {
  seq: SequenceRecord;
  results: Map<number, Outcome>;
  /** Documents this walk wrote a number on (what follows their issue is this walker's to run). */
  written: DocumentRecord[];
}

const keyOf = (tenant: Tenant, doc: DocumentRecord) => `${tenant.account_id}:${tenant.livemode}:${doc.type}:${doc.issue_date.slice(0, 4)}`;

function pendingFor(request: IssueRequest, year: number, number: number, reservedAt: string): PendingNumber {
  return {
    document_id: request.doc.id,
    year,
    number,
    format: request.format,
    formatted: formatNumber(request.format, year, number),
    revision: revisionOf(request.doc),
    reserved_at: reservedAt,
    supplier: request.snapshots.supplier,
    purchaser: request.snapshots.purchaser,
    idempotency: request.snapshots.idempotency ?? null,
  };
}

/** Drops the entries up to and including `failed` (applied, or never applicable) and closes the gap behind them. */
function compacted(seq: SequenceRecord, list: PendingNumber[], failed: number, at: string): SequenceRecord {
  const rest = list.slice(failed + 1).map((p) => {
    const number = p.number - 1;
    // Entries after the first are always batch entries, which carry their format.
    return { ...p, number, formatted: formatNumber(p.format ?? '', p.year, number) };
  });
  return { ...seq, last: seq.last - 1, pending: rest.length ? rest : null, updated_at: at };
}

/**
 * `doc` was issued in `p`'s sequence from the revision `p` was reserved for (applyIssue writes revision + 1),
 * so from an entry of the same request — under another number only if a compaction moved it.
 */
const carries = (doc: DocumentRecord, p: PendingNumber) => doc.sequence_year === p.year && doc.sequence_number === p.number;

function numberedFrom(doc: DocumentRecord, p: PendingNumber): boolean {
  return p.revision !== undefined && !issuable(doc) && doc.sequence_year === p.year && doc.sequence_number !== null && revisionOf(doc) === p.revision + 1;
}

/** The pending number may be written on `doc`: still the draft, at the revision its issuer checked. */
function appliesTo(doc: DocumentRecord, p: PendingNumber): boolean {
  return issuable(doc) && yearOf(doc) === p.year && (p.revision === undefined || revisionOf(doc) === p.revision);
}

const numberTaken = (formatted: string) =>
  fail.precondition('number_taken', `the number format yields ${formatted}, which another document already has; change the number format`);
