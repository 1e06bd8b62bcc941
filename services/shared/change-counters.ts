// Change counters: a per-record number that strictly increases after every write of the record, read
// by another service to validate what it cached from the record's owner without asking the owner
// (docs/rendering.md, "Fresh ETags without asking"). The owner wraps its collection with
// `countingWrites`; the counter is bumped after the record's write and before the write resolves, so
// before the owner acknowledges the change to anyone. A reader that reads the counter, then asks the
// owner, may keep the answer under the counter it read: once a change is acknowledged the counter
// differs from every value read before the change committed.
//
// Counters live in the shared document store (collection `change_counters_<scope>`, id = the record's
// id, the counter = the store's own `version`), so they need no engine of their own and cost one point
// read. They are the one kind of record two services share: written only by the owner, read by others.
import { Collection, DocumentStore, StoredDoc } from './store/port';

/** What is counted: documents (documents service), workspaces (identity service). */
export type CounterScope = 'documents' | 'accounts';

export interface ChangeCounters {
  /** Strictly increases the record's counter; resolves once the new value is readable. */
  bump(scope: CounterScope, id: number): Promise<void>;
  /** The record's counter now; 0 for a record never written since counting began. */
  read(scope: CounterScope, id: number): Promise<number>;
}

type CounterDoc = StoredDoc;

export function storeChangeCounters(store: DocumentStore): ChangeCounters {
  const collections = new Map<CounterScope, Collection<CounterDoc>>();
  const collection = (scope: CounterScope) => {
    let c = collections.get(scope);
    if (!c) collections.set(scope, (c = store.collection<CounterDoc>({ name: `change_counters_${scope}` })));
    return c;
  };
  return {
    async bump(scope, id) {
      // The store raises the counter document's `version` by one atomically: the counter.
      await collection(scope).increment(id);
    },
    async read(scope, id) {
      return (await collection(scope).get(id))?.version ?? 0;
    },
  };
}

/**
 * The collection with every successful update followed by a bump of the record's counter, awaited
 * before the update resolves. A bump that fails fails the write's caller (the change is stored but not
 * acknowledged; readers bound their caches by a TTL for that case). Inserts bump nothing: no reader
 * can hold anything of a record that did not exist (a miss is never cached), and ids are never reused.
 */
export function countingWrites<T extends StoredDoc>(collection: Collection<T>, counters: ChangeCounters, scope: CounterScope): Collection<T> {
  return {
    get: (id) => collection.get(id),
    getMany: (ids) => collection.getMany(ids),
    findOne: (where) => collection.findOne(where),
    findByUniqueKey: (key) => collection.findByUniqueKey(key),
    list: (query) => collection.list(query),
    count: (where) => collection.count(where),
    insert: (doc) => collection.insert(doc),
    insertMany: (docs) => collection.insertMany(docs),
    increment: (id) => collection.increment(id),
    async update(doc) {
      const written = await collection.update(doc);
      await counters.bump(scope, written.id);
      return written;
    },
  };
}
