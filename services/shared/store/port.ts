// The document-store port every service persists through. Two adapters implement it — SQLite
// (embedded) and MongoDB-compatible via mongoose (distributed) — and one contract suite
// (test/contract/store.contract.ts) runs against both. The contract stays within single-document
// atomicity, so the Mongo adapter needs no multi-document transactions.

export interface StoredDoc {
  id: number;
  /** Incremented on every update; the compare-and-set token of `update`. */
  version: number;
}

export type Scalar = string | number | boolean | null;
/** Equality on top-level fields; `null` matches a missing field too. */
export type Where = Record<string, Scalar>;

export interface ListQuery {
  where: Where;
  /** Fields sorted descending before id (which always comes last, descending). */
  orderBy?: string[];
  /** Keyset: only rows strictly after this position (values of orderBy…, then id). */
  after?: Array<string | number>;
  limit: number;
  /** Case-sensitive literal substring of a field the service keeps normalised (e.g. lower-cased). */
  contains?: { field: string; text: string };
}

export interface CollectionSpec<T> {
  name: string;
  /** Keys that must be unique across the collection, derived from a document (e.g. `iban:12:live:DE89…`). */
  uniqueKeys?: (doc: T) => string[];
  /** Field lists commonly filtered on, for indexes. */
  indexes?: string[][];
  /**
   * The field `contains` searches (a string the service keeps normalised): the adapters keep a substring
   * index over it (SQLite: FTS5 trigram; MongoDB: an indexed array of the field's trigrams), so a search
   * over a large collection reads the matching rows instead of scanning. Other fields still work unindexed.
   */
  searchField?: string;
}

export interface Collection<T extends StoredDoc> {
  /** Inserts with version 1. Throws UniqueViolation when a unique key is taken, DuplicateId when the id is. */
  insert(doc: Omit<T, 'version'>): Promise<T>;
  get(id: number): Promise<T | null>;
  /** The documents of these ids that exist, in no particular order: one round trip for a page's related records. */
  getMany(ids: number[]): Promise<T[]>;
  findOne(where: Where): Promise<T | null>;
  /**
   * The stored document that holds `key` among its unique keys (CollectionSpec.uniqueKeys), or null: a point
   * read through the unique-key records, whatever the engine's indexes (FerretDB answers other filters with a
   * scan). A key claimed by a write still in flight is not held yet: null until that write lands.
   */
  findByUniqueKey(key: string): Promise<T | null>;
  list(query: ListQuery): Promise<T[]>;
  count(where: Where): Promise<number>;
  /** Writes `doc` as version+1 if the stored version still equals doc.version, else throws VersionConflict. */
  update(doc: T): Promise<T>;
  /**
   * Bulk load for seeding and imports: inserts every document (version 1) in as few round trips as the
   * engine allows, claiming their unique keys in bulk too (UniqueViolation when one is taken, DuplicateId
   * when an id is). SQLite: one transaction, all or nothing. MongoDB: claims first, then the documents,
   * then the claims settled; a failure withdraws the claims it made, but may leave documents written
   * before it (no multi-document transactions) — a load is meant for a target nobody else writes to.
   */
  insertMany(docs: Array<Omit<T, 'version'>>): Promise<void>;
  /**
   * For counters kept as a document's version (a document of nothing but id and version): raises the
   * version of `id` by one in one atomic step, creating `{ id }` at version 1 when it is missing, and
   * returns the new version. One round trip, where a read-modify-write takes three.
   */
  increment(id: number): Promise<number>;
}

export interface DocumentStore {
  collection<T extends StoredDoc>(spec: CollectionSpec<T>): Collection<T>;
  /** Atomic, strictly increasing counter (1, 2, …) per sequence name, never above 2^53-1. */
  nextId(sequence: string): Promise<number>;
  /** Takes `count` consecutive values of the counter at once and returns the first (bulk loads). */
  reserveIds(sequence: string, count: number): Promise<number>;
  close(): Promise<void>;
}

export class UniqueViolation extends Error {
  constructor(readonly key: string) {
    super(`unique key taken: ${key}`);
    this.name = 'UniqueViolation';
  }
}

export class VersionConflict extends Error {
  constructor(readonly collection: string, readonly id: number) {
    super(`${collection}/${id} was changed concurrently`);
    this.name = 'VersionConflict';
  }
}

/** The database cannot be reached (down, restarting, unreachable): a temporary condition, not a bug. */
export class StoreUnavailable extends Error {
  constructor(readonly cause: unknown) {
    super(`the database is unreachable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'StoreUnavailable';
  }
}

export class DuplicateId extends Error {
  constructor(readonly collection: string, readonly id: number) {
    super(`${collection}/${id} already exists`);
    this.name = 'DuplicateId';
  }
}

/**
 * Read-modify-write with optimistic concurrency: re-reads and re-applies `change` when another writer
 * got there first. `change` returns the new document, or null to leave it untouched.
 */
export async function mutate<T extends StoredDoc>(
  collection: Collection<T>,
  id: number,
  change: (current: T) => T | null | Promise<T | null>,
  attempts = 20,
): Promise<T | null> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const current = await collection.get(id);
    if (!current) return null;
    const next = await change(current);
    if (!next) return current;
    try {
      return await collection.update(next);
    } catch (err) {
      if (!(err instanceof VersionConflict)) throw err;
    }
  }
  throw new VersionConflict('mutate', id);
}
