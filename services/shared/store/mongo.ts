// Distributed adapter of the document-store port: a MongoDB-compatible database through mongoose.
// Stays within single-document atomicity (FerretDB has no multi-document transactions):
// - updates are compare-and-set on `version` (one replaceOne);
// - unique keys are claim documents in `unique_keys` whose _id is the key. A claim is made before the
//   owner is written and released if that write fails; a claim whose owner no longer holds the key
//   (a crash between the two writes) is taken over once it is older than CLAIM_GRACE_MS.
import mongoose, { Connection, Model } from 'mongoose';
import { Collection, CollectionSpec, DocumentStore, DuplicateId, ListQuery, StoredDoc, UniqueViolation, VersionConflict, Where } from './port';

const CLAIM_GRACE_MS = 30_000;

interface ClaimDoc {
  _id: string;
  collection: string;
  owner: number;
  at: number;
}

const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

export class MongoDocumentStore implements DocumentStore {
  private readonly claims: Model<ClaimDoc>;
  private readonly sequences: Model<{ _id: string; value: number }>;
  private readonly models = new Map<string, Model<Record<string, unknown>>>();

  private constructor(private readonly conn: Connection) {
    this.claims = conn.model<ClaimDoc>(
      'unique_keys',
      new mongoose.Schema({ _id: String, collection: String, owner: Number, at: Number }, { versionKey: false }),
      'unique_keys',
    );
    this.sequences = conn.model<{ _id: string; value: number }>(
      'sequences',
      new mongoose.Schema({ _id: String, value: Number }, { versionKey: false }),
      'sequences',
    );
  }

  static async connect(url: string): Promise<MongoDocumentStore> {
    const conn = await mongoose.createConnection(url, { serverSelectionTimeoutMS: 10_000, autoIndex: false }).asPromise();
    return new MongoDocumentStore(conn);
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
    return new MongoCollection<T>(model, this.claims, spec);
  }

  async nextId(sequence: string): Promise<number> {
    const row = await this.sequences
      .findOneAndUpdate({ _id: sequence }, { $inc: { value: 1 } }, { upsert: true, new: true })
      .lean();
    if (!row || row.value > Number.MAX_SAFE_INTEGER) throw new Error(`sequence ${sequence} failed or overflowed`);
    return row.value;
  }

  async close(): Promise<void> {
    await this.conn.close();
  }
}

class MongoCollection<T extends StoredDoc> implements Collection<T> {
  private indexed?: Promise<unknown>;

  constructor(
    private readonly model: Model<Record<string, unknown>>,
    private readonly claims: Model<ClaimDoc>,
    private readonly spec: CollectionSpec<T>,
  ) {}

  private ensureIndexes(): Promise<unknown> {
    this.indexed ??= Promise.all(
      (this.spec.indexes ?? []).map((fields) =>
        this.model.collection.createIndex(Object.fromEntries([...fields.map((f) => [f, 1]), ['_id', -1]])),
      ),
    ).catch(() => undefined); // an index is an optimisation; queries are correct without it
    return this.indexed;
  }

  private toDoc(raw: Record<string, unknown> | null): T | null {
    if (!raw) return null;
    const { _id, ...rest } = raw;
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

  /** Claims every key for `owner`; on a taken key releases what it claimed and throws UniqueViolation. */
  private async claimKeys(owner: number, keys: string[]): Promise<void> {
    const claimed: string[] = [];
    try {
      for (const key of keys) {
        await this.claimOne(owner, key);
        claimed.push(key);
      }
    } catch (err) {
      await this.releaseKeys(owner, claimed);
      throw err;
    }
  }

  private async claimOne(owner: number, key: string): Promise<void> {
    const _id = this.claimId(key);
    try {
      await this.claims.create({ _id, collection: this.spec.name, owner, at: Date.now() });
      return;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const existing = await this.claims.findById(_id).lean();
    if (!existing) return this.claimOne(owner, key); // released meanwhile
    if (existing.owner === owner) return;
    const holder = this.toDoc(await this.model.findById(existing.owner).lean());
    const stillHeld = holder ? this.keysOf(holder).includes(key) : false;
    if (stillHeld || Date.now() - existing.at < CLAIM_GRACE_MS) throw new UniqueViolation(key);
    const taken = await this.claims.updateOne(
      { _id, owner: existing.owner, at: existing.at },
      { $set: { owner, at: Date.now() } },
    );
    if (taken.modifiedCount !== 1) throw new UniqueViolation(key);
  }

  private async releaseKeys(owner: number, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.claims.deleteMany({ _id: { $in: keys.map((k) => this.claimId(k)) }, owner });
  }

  async insert(input: Omit<T, 'version'>): Promise<T> {
    await this.ensureIndexes();
    const doc = { ...input, version: 1 } as T;
    const keys = this.keysOf(doc);
    await this.claimKeys(doc.id, keys);
    try {
      await this.model.collection.insertOne(this.toRaw(doc) as never);
    } catch (err) {
      await this.releaseKeys(doc.id, keys);
      if (isDuplicateKey(err)) throw new DuplicateId(this.spec.name, doc.id);
      throw err;
    }
    return doc;
  }

  async get(id: number): Promise<T | null> {
    return this.toDoc(await this.model.findById(id).lean());
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
    if (query.contains) and.push({ [query.contains.field]: { $regex: escapeRegex(query.contains.text) } });
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

  async update(doc: T): Promise<T> {
    const next = { ...doc, version: doc.version + 1 } as T;
    const before = await this.get(doc.id);
    if (!before || before.version !== doc.version) throw new VersionConflict(this.spec.name, doc.id);
    const oldKeys = this.keysOf(before);
    const newKeys = this.keysOf(next);
    const added = newKeys.filter((k) => !oldKeys.includes(k));
    await this.claimKeys(doc.id, added);
    const { _id, ...replacement } = this.toRaw(next);
    const result = await this.model.collection.replaceOne({ _id: _id as never, version: doc.version }, replacement);
    if (result.matchedCount !== 1) {
      await this.releaseKeys(doc.id, added);
      throw new VersionConflict(this.spec.name, doc.id);
    }
    await this.releaseKeys(doc.id, oldKeys.filter((k) => !newKeys.includes(k)));
    return next;
  }
}
