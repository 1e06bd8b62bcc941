// Distributed adapter of the document-store port: a MongoDB-compatible database through mongoose.
// Stays within single-document atomicity (FerretDB has no multi-document transactions):
// - updates are compare-and-set on `version` (one replaceOne);
// - unique keys are claim documents in `unique_keys` whose _id is the key and whose `owner` is the id of
//   the document holding it. Every write that needs a key first adds a token of its own to the claim's
//   `pending` list (creating the claim, or joining the owner's claim when a concurrent write of the same
//   document got there first), writes the document, then removes its token. Several writes of one
//   document may share a claim, so no write ever deletes a claim another write may rely on: a claim is
//   deleted only when no write is pending on it and its owner's stored document does not hold the key
//   (checked against `rev`, bumped by every change of the claim). Another document takes a claim over
//   when the owner does not hold the key and no live write is pending — a token older than
//   CLAIM_GRACE_MS belongs to a write that crashed between its two steps.
// - connecting runs a startup atomicity probe (./atomicity-probe.ts) and refuses a database whose
//   single-document writes are not atomic.
import { randomUUID } from 'node:crypto';
import mongoose, { Connection, Model } from 'mongoose';
import { createLogger, Logger } from '../logger';
import { counter, PREFIX } from '../observability/metrics';
import { assertAtomicWrites, AtomicityProbeTarget } from './atomicity-probe';
import { Collection, CollectionSpec, DocumentStore, DuplicateId, ListQuery, StoredDoc, StoreUnavailable, UniqueViolation, VersionConflict, Where } from './port';

const CLAIM_GRACE_MS = 30_000;

const indexErrors = () => counter(`${PREFIX}store_index_errors_total`, 'Indexes the store could not create, by collection.', ['collection']);

interface ClaimDoc {
  _id: string;
  collection: string;
  owner: number;
  /** Tokens (`<ms since epoch>:<uuid>`) of the writes in flight that need this key. */
  pending?: string[];
  /** Bumped on every change: the compare-and-set token of takeovers and deletions. */
  rev?: number;
}

const newToken = () => `${Date.now()}:${randomUUID()}`;
const isLive = (token: string) => Date.now() - Number(token.split(':')[0]) < CLAIM_GRACE_MS;

const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;

/** `count` items evenly spread over `items` (all of them when there are fewer). */
function spread<I>(items: I[], count: number): I[] {
  if (items.length <= count) return items;
  return Array.from({ length: count }, (_, i) => items[Math.floor((i * (items.length - 1)) / (count - 1))]);
}

/**
 * How long an operation waits for an unreachable database before it fails as StoreUnavailable: well inside
 * the callers' 10 s gRPC deadline, so a request during an outage gets a 503 with Retry-After, not a 504.
 */
const SERVER_SELECTION_MS = Number(process.env.STORE_SERVER_SELECTION_MS ?? 4_000);

/** The driver's errors that mean "the database is not reachable now" (down, restarting, connection cut). */
export function isUnreachable(err: unknown): boolean {
  const { MongoServerSelectionError, MongoNetworkError, MongoNotConnectedError, MongoTopologyClosedError } = mongoose.mongo;
  return (
    err instanceof MongoServerSelectionError ||
    err instanceof MongoNetworkError || // includes MongoNetworkTimeoutError
    err instanceof MongoNotConnectedError ||
    err instanceof MongoTopologyClosedError
  );
}

/** Runs one store operation; an unreachable database leaves as StoreUnavailable (→ UNAVAILABLE → 503). */
async function guarded<R>(operation: () => Promise<R>): Promise<R> {
  try {
    return await operation();
  } catch (err) {
    throw isUnreachable(err) ? new StoreUnavailable(err) : err;
  }
}

/**
 * The substring index of a collection's `searchField` on MongoDB-compatible databases (which have no
 * trigram index, and FerretDB no text index): each document carries the distinct trigrams of the field in
 * `_search`, an array with a multikey index. A search asks for documents holding every trigram of the
 * needle (`$all`, served by the index) and confirms the exact substring with a regex on those. A needle
 * shorter than a trigram is a regex over the filtered rows.
 */
export const SEARCH_GRAMS = '_search';
/** Trigrams of a needle that a query asks for: enough to be selective, few enough to keep `$all` cheap. */
const NEEDLE_GRAMS = 12;

export function trigrams(text: string): string[] {
  const chars = [...text];
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) grams.add(chars.slice(i, i + 3).join(''));
  return [...grams];
}

/** The indexes of a collection as created (lazily here, up front by the init Job): declared ones, plus the trigram index. */
export function declaredIndexes(spec: Pick<CollectionSpec<StoredDoc>, 'indexes' | 'searchField'>): string[][] {
  return [...(spec.indexes ?? []), ...(spec.searchField ? [[SEARCH_GRAMS]] : [])];
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

export class MongoDocumentStore implements DocumentStore {
  private readonly claims: Model<ClaimDoc>;
  private readonly sequences: Model<{ _id: string; value: number }>;
  private readonly models = new Map<string, Model<Record<string, unknown>>>();

  private constructor(
    private readonly conn: Connection,
    private readonly log: Logger,
  ) {
    this.claims = conn.model<ClaimDoc>(
      'unique_keys',
      new mongoose.Schema({ _id: String, collection: String, owner: Number, pending: [String], rev: Number }, { versionKey: false }),
      'unique_keys',
    );
    this.sequences = conn.model<{ _id: string; value: number }>(
      'sequences',
      new mongoose.Schema({ _id: String, value: Number }, { versionKey: false }),
      'sequences',
    );
  }

  /** Connects and runs the startup atomicity probe; a database that fails it is refused (AtomicityProbeFailed). */
  static async connect(url: string, log: Logger = createLogger('store')): Promise<MongoDocumentStore> {
    // bufferCommands off: mongoose would otherwise queue every operation during an outage for its own 10 s
    // (bufferTimeoutMS) and the caller would time out instead of hearing "unavailable".
    const conn = await mongoose
      .createConnection(url, { serverSelectionTimeoutMS: SERVER_SELECTION_MS, bufferCommands: false, autoIndex: false })
      .asPromise();
    try {
      await assertAtomicWrites(probeTarget(conn), `probe:${randomUUID()}`);
    } catch (err) {
      await conn.close().catch(() => undefined);
      throw err;
    }
    return new MongoDocumentStore(conn, log);
  }

  collection<T extends StoredDoc>(spec: CollectionSpec<T>): Collection<T> {
    let model = this.models.get(spec.name);
    if (!model) {
      model = this.conn.model<Record<string, unknown>>(
        spec.name,
        new mongoose.Schema({ _id: Number }, { strict: false, versionKey: false, _id: false }),
        spec.name,
      );
      this.models.set(spec.name, model);
    }
    return outageAware(new MongoCollection<T>(model, this.claims, spec, this.log));
  }

  nextId(sequence: string): Promise<number> {
    return guarded(() => this.increment(sequence));
  }

  private async increment(sequence: string): Promise<number> {
    const row = await this.sequences
      .findOneAndUpdate({ _id: sequence }, { $inc: { value: 1 } }, { upsert: true, new: true })
      .lean();
    if (!row || row.value > Number.MAX_SAFE_INTEGER) throw new Error(`sequence ${sequence} failed or overflowed`);
    return row.value;
  }

  reserveIds(sequence: string, count: number): Promise<number> {
    if (!Number.isSafeInteger(count) || count < 1) return Promise.reject(new Error(`cannot reserve ${count} ids`));
    return guarded(async () => {
      const row = await this.sequences.findOneAndUpdate({ _id: sequence }, { $inc: { value: count } }, { upsert: true, new: true }).lean();
      if (!row || row.value > Number.MAX_SAFE_INTEGER) throw new Error(`sequence ${sequence} failed or overflowed`);
      return row.value - count + 1;
    });
  }

  async close(): Promise<void> {
    await this.conn.close();
  }
}

/** `collection` with every operation guarded (StoreUnavailable on an unreachable database). */
function outageAware<T extends StoredDoc>(collection: Collection<T>): Collection<T> {
  return {
    insert: (doc) => guarded(() => collection.insert(doc)),
    get: (id) => guarded(() => collection.get(id)),
    getMany: (ids) => guarded(() => collection.getMany(ids)),
    findOne: (where) => guarded(() => collection.findOne(where)),
    findByUniqueKey: (key) => guarded(() => collection.findByUniqueKey(key)),
    list: (query) => guarded(() => collection.list(query)),
    count: (where) => guarded(() => collection.count(where)),
    update: (doc) => guarded(() => collection.update(doc)),
    insertMany: (docs) => guarded(() => collection.insertMany(docs)),
    increment: (id) => guarded(() => collection.increment(id)),
  };
}

/** The probe's scratch documents live in `atomicity_probe` and are removed afterwards. */
function probeTarget(conn: Connection): AtomicityProbeTarget {
  const probe = conn.collection<{ _id: string; value?: number; version?: number }>('atomicity_probe');
  return {
    create: async (id) => {
      await probe.insertOne({ _id: id, value: 0, version: 0 });
    },
    increment: async (id) => {
      const row = await probe.findOneAndUpdate({ _id: id }, { $inc: { value: 1 } }, { returnDocument: 'after' });
      return row?.value ?? NaN;
    },
    compareAndSet: async (id, from) => (await probe.replaceOne({ _id: id, version: from }, { version: from + 1 })).modifiedCount === 1,
    cleanUp: async (ids) => {
      await probe.deleteMany({ _id: { $in: ids } });
    },
  };
}

class MongoCollection<T extends StoredDoc> implements Collection<T> {
  private indexed?: Promise<unknown>;

  constructor(
    private readonly model: Model<Record<string, unknown>>,
    private readonly claims: Model<ClaimDoc>,
    private readonly spec: CollectionSpec<T>,
    private readonly log: Logger,
  ) {}

  /**
   * Queries are correct without an index, so a failure does not fail them — but it is never silent: every
   * index that could not be created is logged at error (once per collection and process) and counted
   * (invoicing_store_index_errors_total), since a missing index turns lists into collection scans.
   */
  private ensureIndexes(): Promise<unknown> {
    this.indexed ??= Promise.all(
      declaredIndexes(this.spec).map((fields) =>
        this.model.collection.createIndex(Object.fromEntries([...fields.map((f) => [f, 1]), ['_id', -1]])).catch((err: unknown) => {
          indexErrors().labels({ collection: this.spec.name }).inc();
          this.log.error(
            { collection: this.spec.name, fields, err: err instanceof Error ? err.message : String(err) },
            'index creation failed; queries on these fields scan the collection until it exists',
          );
        }),
      ),
    );
    return this.indexed;
  }

  /**
   * Whether every document of the collection carries its trigrams. Documents written before the collection
   * had a searchField get them once, in the background; until then searches fall back to the regex scan,
   * slower but complete.
   */
  private searchBackfilled = false;
  private backfilling?: Promise<void>;

  private backfillSearch(): void {
    const field = this.spec.searchField;
    if (!field || this.backfilling) return;
    this.backfilling = (async () => {
      const missing = { [SEARCH_GRAMS]: { $exists: false }, [field]: { $type: 'string' } };
      for (;;) {
        const batch = await this.model.collection.find(missing, { projection: { [field]: 1 } }).limit(500).toArray();
        if (batch.length === 0) break;
        // One update per document, not a bulkWrite: FerretDB behind the test launcher's write-serialising
        // proxy was seen never to answer a multi-statement bulkWrite, holding every writer up.
        for (const raw of batch) {
          await this.model.collection.updateOne({ _id: raw._id, [field]: raw[field] } as never, { $set: { [SEARCH_GRAMS]: trigrams(String(raw[field])) } });
        }
      }
      this.searchBackfilled = true;
    })().catch((err: unknown) => {
      this.backfilling = undefined; // tried again by the next search
      this.log.error({ collection: this.spec.name, err: err instanceof Error ? err.message : String(err) }, 'search backfill failed; searches scan');
    });
  }

  /** The raw document as stored: with its trigrams when the collection is searchable. */
  private stored(doc: T): Record<string, unknown> {
    const raw = this.toRaw(doc);
    const field = this.spec.searchField;
    if (field && typeof raw[field] === 'string') raw[SEARCH_GRAMS] = trigrams(raw[field] as string);
    return raw;
  }

  private toDoc(raw: Record<string, unknown> | null): T | null {
    if (!raw) return null;
    const { _id, [SEARCH_GRAMS]: _grams, ...rest } = raw;
    return { ...rest, id: _id } as unknown as T;
  }

  private toRaw(doc: T): Record<string, unknown> {
    const { id, ...rest } = doc as unknown as Record<string, unknown>;
    return { _id: id, ...rest };
  }

  private keysOf(doc: T): string[] {
    return this.spec.uniqueKeys ? [...new Set(this.spec.uniqueKeys(doc))] : [];
  }

  private claimId(key: string) {
    return `${this.spec.name}|${key}`;
  }

  /**
   * Claims every key for `owner` under `token`; on a taken key withdraws what it claimed and throws
   * UniqueViolation. Several keys (an issued document's number and number text) in one insert.
   */
  private async claimKeys(owner: number, keys: string[], token: string): Promise<void> {
    if (keys.length > 1) {
      await this.claimWanted(keys.map((key) => ({ owner, key })), token);
      return;
    }
    const claimed: string[] = [];
    try {
      for (const key of keys) {
        await this.claimOne(owner, key, token);
        claimed.push(key);
      }
    } catch (err) {
      await this.withdraw(owner, claimed, token);
      throw err;
    }
  }

  private async claimOne(owner: number, key: string, token: string): Promise<void> {
    const _id = this.claimId(key);
    // Every retry follows a change another writer made to the claim, so this converges; the bound is a guard.
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        await this.claims.collection.insertOne({ _id, collection: this.spec.name, owner, pending: [token], rev: 0 } as never);
        return;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const existing = await this.claims.findById(_id).lean();
      if (!existing) continue; // deleted meanwhile
      if (existing.owner === owner) {
        // A concurrent write of the same document holds the claim: join it rather than share it unannounced.
        const joined = await this.claims.updateOne({ _id, owner }, { $addToSet: { pending: token }, $inc: { rev: 1 } });
        if (joined.matchedCount === 1) return;
        continue; // taken over meanwhile
      }
      if ((existing.pending ?? []).some(isLive)) throw new UniqueViolation(key);
      if (await this.holds(existing.owner, key)) throw new UniqueViolation(key);
      const taken = await this.claims.updateOne(
        { _id, owner: existing.owner, rev: existing.rev ?? null },
        { $set: { owner, pending: [token] }, $inc: { rev: 1 } },
      );
      if (taken.modifiedCount === 1) return;
    }
    throw new VersionConflict('unique_keys', owner);
  }

  /** Whether the stored document `id` holds `key`. */
  private async holds(id: number, key: string): Promise<boolean> {
    const holder = this.toDoc(await this.model.findById(id).lean());
    return holder ? this.keysOf(holder).includes(key) : false;
  }

  /** After a successful write: the claims stay, `token`'s write no longer pends on them. */
  private async settle(owner: number, keys: string[], token: string): Promise<void> {
    if (keys.length > 1) {
      const ids = keys.map((key) => this.claimId(key));
      await this.claims.updateMany({ _id: { $in: ids }, owner }, { $pull: { pending: token }, $inc: { rev: 1 } });
      return;
    }
    for (const key of keys) await this.claims.updateOne({ _id: this.claimId(key), owner }, { $pull: { pending: token }, $inc: { rev: 1 } });
  }

  /** After a failed write: drops `token` from the claims and deletes those nobody needs. */
  private async withdraw(owner: number, keys: string[], token: string): Promise<void> {
    await this.settle(owner, keys, token);
    for (const key of keys) await this.releaseIfUnneeded(owner, key);
  }

  /**
   * Deletes `owner`'s claim of `key` if no write is pending on it and the stored document does not hold
   * the key. A write that starts needing the claim meanwhile bumps `rev`, so the delete then misses.
   */
  private async releaseIfUnneeded(owner: number, key: string): Promise<void> {
    const _id = this.claimId(key);
    const claim = await this.claims.findById(_id).lean();
    if (!claim || claim.owner !== owner || (claim.pending ?? []).some(isLive)) return;
    if (await this.holds(owner, key)) return;
    await this.claims.deleteOne({ _id, owner, rev: claim.rev ?? null });
  }

  async insert(input: Omit<T, 'version'>): Promise<T> {
    await this.ensureIndexes();
    const doc = { ...input, version: 1 } as T;
    const keys = this.keysOf(doc);
    const token = newToken();
    await this.claimKeys(doc.id, keys, token);
    try {
      await this.model.collection.insertOne(this.stored(doc) as never);
    } catch (err) {
      // A duplicate id means another document `id` exists, possibly holding these very keys: withdraw
      // releases only claims that document does not hold.
      await this.withdraw(doc.id, keys, token);
      if (isDuplicateKey(err)) throw new DuplicateId(this.spec.name, doc.id);
      throw err;
    }
    await this.settle(doc.id, keys, token);
    return doc;
  }

  async get(id: number): Promise<T | null> {
    return this.toDoc(await this.model.findById(id).lean());
  }

  async getMany(ids: number[]): Promise<T[]> {
    if (ids.length === 0) return [];
    const rows = await this.model.find({ _id: { $in: ids } }).lean();
    return rows.map((row) => this.toDoc(row as Record<string, unknown>) as T);
  }

  private filter(where: Where): Record<string, unknown> {
    const filter: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(where)) filter[field === 'id' ? '_id' : field] = value;
    return filter;
  }

  async findOne(where: Where): Promise<T | null> {
    await this.ensureIndexes();
    return this.toDoc(await this.model.findOne(this.filter(where)).lean());
  }

  async findByUniqueKey(key: string): Promise<T | null> {
    // Two reads by _id: the claim names its owner, and the owner holds the key only once its write landed
    // (a claim outlives a failed write until released, and precedes a write in flight).
    const claim = await this.claims.findById(this.claimId(key)).lean();
    if (!claim) return null;
    const owner = this.toDoc(await this.model.findById(claim.owner).lean());
    return owner && this.keysOf(owner).includes(key) ? owner : null;
  }

  async list(query: ListQuery): Promise<T[]> {
    await this.ensureIndexes();
    const filter = this.filter(query.where);
    const order = [...(query.orderBy ?? []), '_id'];
    const and: Record<string, unknown>[] = [];
    if (query.after) {
      if (query.after.length !== order.length) throw new Error('keyset length does not match the sort order');
      const after = query.after;
      and.push({
        $or: order.map((field, i) => ({
          ...Object.fromEntries(order.slice(0, i).map((f, j) => [f, after[j]])),
          [field]: { $lt: after[i] },
        })),
      });
    }
    if (query.contains) {
      and.push({ [query.contains.field]: { $regex: escapeRegex(query.contains.text) } });
      if (query.contains.field === this.spec.searchField) {
        this.backfillSearch();
        const grams = trigrams(query.contains.text);
        if (this.searchBackfilled && grams.length > 0) and.push({ [SEARCH_GRAMS]: { $all: spread(grams, NEEDLE_GRAMS) } });
      }
    }
    if (and.length) filter.$and = and;
    const rows = await this.model
      .find(filter)
      .sort(Object.fromEntries(order.map((f) => [f, -1])))
      .limit(query.limit)
      .lean();
    return rows.map((row) => this.toDoc(row as Record<string, unknown>) as T);
  }

  async count(where: Where): Promise<number> {
    return this.model.countDocuments(this.filter(where));
  }

  async insertMany(input: Array<Omit<T, 'version'>>): Promise<void> {
    if (input.length === 0) return;
    await this.ensureIndexes();
    const docs = input.map((doc) => ({ ...doc, version: 1 }) as T);
    const token = newToken();
    const claimed = await this.claimMany(docs, token);
    try {
      await this.model.collection.insertMany(docs.map((doc) => this.stored(doc)) as never[], { ordered: true });
    } catch (err) {
      for (const [owner, keys] of claimed) await this.withdraw(owner, keys, token);
      const duplicate = (err as { writeErrors?: Array<{ code?: number; err?: { op?: { _id?: number } } }> }).writeErrors?.find((e) => e.code === 11000);
      if (isDuplicateKey(err) || duplicate) throw new DuplicateId(this.spec.name, Number(duplicate?.err?.op?._id ?? NaN));
      throw err;
    }
    // Settled: the claims stay, this load no longer pends on them (one update for the whole batch).
    const ids = [...claimed.values()].flat().map((key) => this.claimId(key));
    if (ids.length) await this.claims.updateMany({ _id: { $in: ids } }, { $pull: { pending: token }, $inc: { rev: 1 } });
  }

  /**
   * The unique keys of a bulk load, claimed for their documents under `token`: one unordered insert of
   * every claim; a key found taken is claimed the careful way (claimOne: joined, taken over from a crashed
   * write, or UniqueViolation). On a violation every claim made is withdrawn. Returns the keys by owner.
   */
  private async claimMany(docs: T[], token: string): Promise<Map<number, string[]>> {
    return this.claimWanted(
      docs.flatMap((doc) => this.keysOf(doc).map((key) => ({ owner: doc.id, key }))),
      token,
    );
  }

  /** claimMany's work, for any keys of any owners. */
  private async claimWanted(wanted: Array<{ owner: number; key: string }>, token: string): Promise<Map<number, string[]>> {
    const claimed = new Map<number, string[]>();
    if (wanted.length === 0) return claimed;
    const seen = new Set<string>();
    for (const { key } of wanted) {
      if (seen.has(key)) throw new UniqueViolation(key); // two documents of the load want one key
      seen.add(key);
    }
    let taken = new Set<number>();
    try {
      await this.claims.collection.insertMany(
        wanted.map(({ owner, key }) => ({ _id: this.claimId(key), collection: this.spec.name, owner, pending: [token], rev: 0 }) as never),
        { ordered: false },
      );
    } catch (err) {
      const errors = (err as { writeErrors?: Array<{ code?: number; index?: number }> }).writeErrors;
      if (!errors?.every((e) => e.code === 11000)) throw err;
      taken = new Set(errors.map((e) => e.index!));
    }
    const add = (owner: number, key: string) => claimed.set(owner, [...(claimed.get(owner) ?? []), key]);
    wanted.forEach(({ owner, key }, i) => taken.has(i) || add(owner, key));
    try {
      for (const i of taken) {
        await this.claimOne(wanted[i].owner, wanted[i].key, token);
        add(wanted[i].owner, wanted[i].key);
      }
    } catch (err) {
      for (const [owner, keys] of claimed) await this.withdraw(owner, keys, token);
      throw err;
    }
    return claimed;
  }

  async increment(id: number): Promise<number> {
    const row = await this.model.collection.findOneAndUpdate({ _id: id as never }, { $inc: { version: 1 } }, { upsert: true, returnDocument: 'after' });
    const version = (row as unknown as { version?: number } | null)?.version;
    if (typeof version !== 'number') throw new Error(`${this.spec.name}/${id}: increment returned no version`);
    return version;
  }

  async update(doc: T): Promise<T> {
    const next = { ...doc, version: doc.version + 1 } as T;
    const before = await this.get(doc.id);
    if (!before || before.version !== doc.version) throw new VersionConflict(this.spec.name, doc.id);
    const oldKeys = this.keysOf(before);
    const newKeys = this.keysOf(next);
    const added = newKeys.filter((k) => !oldKeys.includes(k));
    const token = newToken();
    await this.claimKeys(doc.id, added, token);
    const { _id, ...replacement } = this.stored(next);
    let matched: number;
    try {
      matched = (await this.model.collection.replaceOne({ _id: _id as never, version: doc.version }, replacement)).matchedCount;
    } catch (err) {
      await this.withdraw(doc.id, added, token);
      throw err;
    }
    if (matched !== 1) {
      // The winner of this compare-and-set may hold the same keys through the same claims: withdraw
      // leaves those claimed.
      await this.withdraw(doc.id, added, token);
      throw new VersionConflict(this.spec.name, doc.id);
    }
    await this.settle(doc.id, added, token);
    for (const key of oldKeys.filter((k) => !newKeys.includes(k))) await this.releaseIfUnneeded(doc.id, key);
    return next;
  }
}
