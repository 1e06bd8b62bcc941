// The document-store port's contract, run against every adapter (SQLite embedded, MongoDB-compatible real).
import { randomBytes } from 'node:crypto';
import { DocumentStore, DuplicateId, mutate, StoredDoc, UniqueViolation, VersionConflict } from '../../services/shared/store/port';

interface Item extends StoredDoc {
  tenant: number;
  live: boolean;
  name: string;
  code: string | null;
  day: string;
  search: string;
  gone: string | null;
}

export interface StoreFactory {
  open(): Promise<DocumentStore>;
  /** Opens the same data again (persistence). */
  reopen(): Promise<DocumentStore>;
}

export function describeStoreContract(adapter: string, factory: StoreFactory): void {
  describe(`document store contract: ${adapter}`, () => {
    let store: DocumentStore;
    const collectionName = () => `items_${randomBytes(4).toString('hex')}`;
    const items = (name = collectionName()) =>
      store.collection<Item>({ name, uniqueKeys: (d) => (d.code && !d.gone ? [`code:${d.tenant}:${d.code}`] : []), indexes: [['tenant', 'live']] });
    const item = (id: number, over: Partial<Item> = {}): Omit<Item, 'version'> => ({
      id, tenant: 1, live: true, name: `item ${id}`, code: null, day: '2026-01-01', search: `item ${id}`, gone: null, ...over,
    });

    beforeAll(async () => {
      store = await factory.open();
    });
    afterAll(() => store?.close());

    it('inserts with version 1 and reads by id; missing ids read as null', async () => {
      const c = items();
      const saved = await c.insert(item(1, { name: 'héllo' }));
      expect(saved.version).toBe(1);
      expect(await c.get(1)).toEqual(saved);
      expect(await c.get(2)).toBeNull();
    });

    it('refuses a duplicate id', async () => {
      const c = items();
      await c.insert(item(1));
      await expect(c.insert(item(1))).rejects.toBeInstanceOf(DuplicateId);
    });

    it('filters on equality, booleans and null (null also matches a missing field)', async () => {
      const c = items();
      await c.insert(item(1, { live: true }));
      await c.insert(item(2, { live: false }));
      await c.insert(item(3, { live: true, gone: '2026-02-02' }));
      expect((await c.list({ where: { live: true, gone: null }, limit: 10 })).map((d) => d.id)).toEqual([1]);
      expect((await c.list({ where: { live: false }, limit: 10 })).map((d) => d.id)).toEqual([2]);
      expect(await c.count({ tenant: 1 })).toBe(3);
      expect((await c.findOne({ name: 'item 3' }))?.id).toBe(3);
      expect(await c.findOne({ name: 'nobody' })).toBeNull();
    });

    it('lists id descending with keyset pagination', async () => {
      const c = items();
      for (let id = 1; id <= 5; id++) await c.insert(item(id));
      const first = await c.list({ where: {}, limit: 2 });
      expect(first.map((d) => d.id)).toEqual([5, 4]);
      const second = await c.list({ where: {}, limit: 2, after: [4] });
      expect(second.map((d) => d.id)).toEqual([3, 2]);
    });

    it('orders by a field then id, both descending, with a compound keyset', async () => {
      const c = items();
      await c.insert(item(1, { day: '2026-03-01' }));
      await c.insert(item(2, { day: '2026-01-01' }));
      await c.insert(item(3, { day: '2026-03-01' }));
      await c.insert(item(4, { day: '2026-02-01' }));
      const all = await c.list({ where: {}, orderBy: ['day'], limit: 10 });
      expect(all.map((d) => d.id)).toEqual([3, 1, 4, 2]);
      const rest = await c.list({ where: {}, orderBy: ['day'], after: ['2026-03-01', 3], limit: 10 });
      expect(rest.map((d) => d.id)).toEqual([1, 4, 2]);
    });

    it('matches `contains` as a literal substring: regex and LIKE characters are plain', async () => {
      const c = items();
      const texts = ['100% sure', 'under_score', 'a.b', 'star*', 'back\\slash', 'paren(', 'plain'];
      for (const [i, search] of texts.entries()) await c.insert(item(i + 1, { search }));
      const find = async (text: string) => (await c.list({ where: {}, limit: 10, contains: { field: 'search', text } })).map((d) => d.search);
      expect(await find('%')).toEqual(['100% sure']);
      expect(await find('_')).toEqual(['under_score']);
      expect(await find('.')).toEqual(['a.b']);
      expect(await find('*')).toEqual(['star*']);
      expect(await find('\\')).toEqual(['back\\slash']);
      expect(await find('(')).toEqual(['paren(']);
      expect(await find('.*')).toEqual([]);
    });

    describe('findByUniqueKey: the document holding a unique key, through the key itself', () => {
      it('answers the holder of a key, and null for a key nobody holds', async () => {
        const c = items();
        const saved = await c.insert(item(1, { code: 'A' }));
        await c.insert(item(2, { code: 'B', tenant: 2 }));
        expect(await c.findByUniqueKey('code:1:A')).toEqual(saved);
        expect((await c.findByUniqueKey('code:2:B'))?.id).toBe(2);
        expect(await c.findByUniqueKey('code:2:A')).toBeNull();
        expect(await c.findByUniqueKey('code:1:Z')).toBeNull();
      });

      it('follows updates: a key given up is no longer found, a new one is, at the version written', async () => {
        const c = items();
        const saved = await c.insert(item(1, { code: 'A' }));
        const renamed = await c.update({ ...saved, code: 'B' });
        expect(await c.findByUniqueKey('code:1:A')).toBeNull();
        expect(await c.findByUniqueKey('code:1:B')).toEqual(renamed);
        await c.update({ ...renamed, gone: '2026-02-02' });
        expect(await c.findByUniqueKey('code:1:B')).toBeNull();
      });

      it('a write that failed leaves no holder of the keys it claimed, and the earlier holder stays found', async () => {
        const c = items();
        const first = await c.insert(item(1, { code: 'A' }));
        // Refused on its id after its key was claimed (the Mongo adapter claims keys before the write).
        await expect(c.insert(item(1, { code: 'C' }))).rejects.toBeInstanceOf(DuplicateId);
        expect(await c.findByUniqueKey('code:1:C')).toBeNull();
        // Refused on a key another document holds.
        await expect(c.insert(item(2, { code: 'A' }))).rejects.toBeInstanceOf(UniqueViolation);
        expect(await c.findByUniqueKey('code:1:A')).toEqual(first);
      });

      it('keys are per collection: the same key in another collection is another document', async () => {
        const a = items();
        const b = items();
        await a.insert(item(1, { code: 'A' }));
        expect(await b.findByUniqueKey('code:1:A')).toBeNull();
        await b.insert(item(7, { code: 'A' }));
        expect((await b.findByUniqueKey('code:1:A'))?.id).toBe(7);
        expect((await a.findByUniqueKey('code:1:A'))?.id).toBe(1);
      });
    });

    describe('substring index (searchField): `contains` answers exactly what a scan would', () => {
      const searchable = (name = collectionName()) =>
        store.collection<Item>({ name, indexes: [['tenant', 'live']], searchField: 'search' });
      const find = async (c: ReturnType<typeof searchable>, text: string, where = {}) =>
        (await c.list({ where, limit: 100, contains: { field: 'search', text } })).map((d) => d.id);

      it('finds literal substrings, also of query-syntax characters, case-sensitively', async () => {
        const c = searchable();
        const texts = ['acme "quoted" ltd', 'near(x) and or not', 'star* col:umn', 'ÚČTO s.r.o.', 'účto s.r.o.', 'plain words', 'xyz'];
        for (const [i, search] of texts.entries()) await c.insert(item(i + 1, { search }));
        expect(await find(c, '"quoted"')).toEqual([1]);
        expect(await find(c, 'near(x)')).toEqual([2]);
        expect(await find(c, 'and or')).toEqual([2]);
        expect(await find(c, 'star*')).toEqual([3]);
        expect(await find(c, 'col:umn')).toEqual([3]);
        expect(await find(c, 'účto')).toEqual([5]);
        expect(await find(c, 'ÚČTO')).toEqual([4]);
        expect(await find(c, 'PLAIN')).toEqual([]); // the service normalises case; the store matches exactly
        expect(await find(c, 's.r.o.')).toEqual([5, 4]);
        expect(await find(c, 'xyz')).toEqual([7]);
        expect(await find(c, 'xy')).toEqual([7]); // shorter than a trigram: still found
        expect(await find(c, 'y')).toEqual([7]);
      });

      it('follows updates: a changed text is found by its new words only', async () => {
        const c = searchable();
        const saved = await c.insert(item(1, { search: 'old name' }));
        await c.update({ ...saved, search: 'new name' });
        expect(await find(c, 'old name')).toEqual([]);
        expect(await find(c, 'new name')).toEqual([1]);
      });

      it('combines with filters and keyset pagination, in both orders, beyond the first rows of a large scope', async () => {
        const c = searchable();
        const count = 3_000;
        const dayOf = (i: number) => `2026-01-${String((i % 28) + 1).padStart(2, '0')}`;
        // Every 7th row of tenant 1 holds the needle; tenant 2's rows all hold it and must never show.
        await c.insertMany(
          Array.from({ length: count }, (_, i) =>
            item(i + 1, { tenant: i % 3 === 2 ? 2 : 1, search: i % 3 === 2 || i % 7 === 0 ? `row ${i} needle` : `row ${i} hay`, day: dayOf(i) }),
          ),
        );
        const expected = Array.from({ length: count }, (_, i) => ({ id: i + 1, day: dayOf(i), i })).filter(({ i }) => i % 3 !== 2 && i % 7 === 0);
        const pages: number[] = [];
        let after: number[] | undefined;
        for (;;) {
          const page = await c.list({ where: { tenant: 1 }, limit: 40, after, contains: { field: 'search', text: 'needle' } });
          pages.push(...page.map((d) => d.id));
          if (page.length < 40) break;
          after = [page[page.length - 1].id];
        }
        expect(pages).toEqual(expected.map(({ id }) => id).reverse());
        const byDay = await c.list({ where: { tenant: 1 }, orderBy: ['day'], limit: 1000, contains: { field: 'search', text: 'needle' } });
        const sorted = [...expected].sort((a, b) => (a.day === b.day ? b.id - a.id : a.day < b.day ? 1 : -1));
        expect(byDay.map((d) => d.id)).toEqual(sorted.map((d) => d.id));
        const rare = await c.list({ where: { tenant: 1 }, limit: 5, contains: { field: 'search', text: 'row 7 needle' } });
        expect(rare.map((d) => d.id)).toEqual([8]);
      });

      it('indexes what a collection already held when it gains a searchField', async () => {
        const name = collectionName();
        const plain = store.collection<Item>({ name, indexes: [['tenant', 'live']] });
        await plain.insert(item(1, { search: 'written before the index' }));
        await plain.insertMany([item(2, { search: 'also before the index' })]);
        const c = searchable(name);
        expect(await find(c, 'before the')).toEqual([2, 1]);
      });
    });

    describe('bulk loads', () => {
      it('insertMany writes every document at version 1 and refuses a duplicate id', async () => {
        const c = store.collection<Item>({ name: collectionName(), indexes: [['tenant', 'live']] });
        await c.insertMany([item(1), item(2), item(3)]);
        expect((await c.list({ where: {}, limit: 10 })).map((d) => [d.id, d.version])).toEqual([[3, 1], [2, 1], [1, 1]]);
        await expect(c.insertMany([item(4), item(2)])).rejects.toBeInstanceOf(DuplicateId);
      });

      it('insertMany claims the unique keys of its documents: held afterwards, a taken key refused with UniqueViolation', async () => {
        const c = items();
        await c.insert(item(1, { code: 'A' }));
        await c.insertMany([item(2, { code: 'B' }), item(3), item(4, { code: 'C' })]);
        expect((await c.list({ where: {}, limit: 10 })).map((d) => [d.id, d.version])).toEqual([[4, 1], [3, 1], [2, 1], [1, 1]]);
        // The keys the load claimed are held like those of a single insert.
        await expect(c.insert(item(5, { code: 'B' }))).rejects.toBeInstanceOf(UniqueViolation);
        await expect(c.insertMany([item(6, { code: 'D' }), item(7, { code: 'A' })])).rejects.toBeInstanceOf(UniqueViolation);
        await expect(c.insertMany([item(8, { code: 'E' }), item(9, { code: 'E' })])).rejects.toBeInstanceOf(UniqueViolation);
        // A refused load wrote no document and left no claim behind: its free keys can be taken.
        expect(await c.count({})).toBe(4);
        await c.insert(item(10, { code: 'D' }));
        await c.insertMany([item(11, { code: 'E' })]);
        // A released key (its holder let it go) can be claimed by a load.
        await c.update({ ...(await c.get(2))!, gone: '2026-02-02' });
        await c.insertMany([item(12, { code: 'B' })]);
        expect((await c.get(12))?.code).toBe('B');
      });

      it('getMany reads the documents of the ids that exist, in one call', async () => {
        const c = items();
        await c.insertMany([item(1), item(2), item(3)]);
        expect((await c.getMany([3, 1, 9])).map((d) => [d.id, d.version]).sort()).toEqual([[1, 1], [3, 1]]);
        expect(await c.getMany([])).toEqual([]);
      });

      it('reserveIds takes a block of the counter that nextId continues after', async () => {
        const sequence = `bulk_${randomBytes(4).toString('hex')}`;
        expect(await store.nextId(sequence)).toBe(1);
        expect(await store.reserveIds(sequence, 1000)).toBe(2);
        expect(await store.nextId(sequence)).toBe(1002);
        const blocks = await Promise.all([store.reserveIds(sequence, 10), store.reserveIds(sequence, 10)]);
        expect(blocks.sort((a, b) => a - b)).toEqual([1003, 1013]);
      });
    });

    it('update is compare-and-set on version', async () => {
      const c = items();
      const saved = await c.insert(item(1));
      const updated = await c.update({ ...saved, name: 'renamed' });
      expect(updated.version).toBe(2);
      await expect(c.update({ ...saved, name: 'stale' })).rejects.toBeInstanceOf(VersionConflict);
      expect((await c.get(1))?.name).toBe('renamed');
    });

    it('mutate retries concurrent read-modify-writes without losing one', async () => {
      const c = items();
      await c.insert(item(1, { name: '0' }));
      await Promise.all(Array.from({ length: 10 }, () => mutate(c, 1, (d) => ({ ...d, name: String(Number(d.name) + 1) }))));
      expect((await c.get(1))?.name).toBe('10');
    });

    it('enforces unique keys on insert and update, and frees keys a document stops holding', async () => {
      const c = items();
      await c.insert(item(1, { code: 'A' }));
      await expect(c.insert(item(2, { code: 'A' }))).rejects.toBeInstanceOf(UniqueViolation);
      expect(await c.get(2)).toBeNull(); // nothing half-written
      const other = await c.insert(item(3, { code: 'B' }));
      await expect(c.update({ ...other, code: 'A' })).rejects.toBeInstanceOf(UniqueViolation);
      expect((await c.get(3))?.code).toBe('B');
      const first = (await c.get(1))!;
      await c.update({ ...first, gone: '2026-01-02' }); // releases A
      expect((await c.insert(item(4, { code: 'A' }))).id).toBe(4);
      await c.insert(item(5, { code: 'A', tenant: 2 })); // keys are per tenant
    });

    it('holds unique keys under concurrent inserts: exactly one wins', async () => {
      const c = items();
      const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => c.insert(item(i + 1, { code: 'RACE' }))));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(UniqueViolation);
      expect(await c.count({ code: 'RACE' })).toBe(1);
    });

    describe('unique keys under concurrent writers of the same document', () => {
      it('a losing compare-and-set keeps the winner\'s claim: no third document can take the key', async () => {
        const c = items();
        const keys = ['K1', 'K2', 'K3', 'K4', 'K5'];
        for (const [i] of keys.entries()) await c.insert(item(i + 1));
        const intruder = await c.insert(item(100));
        for (const [i, code] of keys.entries()) {
          const current = (await c.get(i + 1))!;
          // Four writers of one version: exactly one compare-and-set wins, the others lose.
          const results = await Promise.allSettled(Array.from({ length: 4 }, (_, w) => c.update({ ...current, code, name: `writer ${w}` })));
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflict);
          await expect(c.insert(item(200 + i, { code }))).rejects.toBeInstanceOf(UniqueViolation);
          await expect(c.update({ ...(await c.get(intruder.id))!, code })).rejects.toBeInstanceOf(UniqueViolation);
        }
        expect(await c.count({ code: 'K1' })).toBe(1);
      });

      it('a losing compare-and-set frees the key only it wanted', async () => {
        const c = items();
        const doc = await c.insert(item(1));
        const results = await Promise.allSettled(['WIN_OR_LOSE_A', 'WIN_OR_LOSE_B'].map((code) => c.update({ ...doc, code })));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const held = (await c.get(1))!.code!;
        const freed = held === 'WIN_OR_LOSE_A' ? 'WIN_OR_LOSE_B' : 'WIN_OR_LOSE_A';
        expect((await c.insert(item(2, { code: freed }))).code).toBe(freed);
        await expect(c.insert(item(3, { code: held }))).rejects.toBeInstanceOf(UniqueViolation);
      });

      it('mutate with concurrent writers of the same key leaves the key held by the document', async () => {
        const c = items();
        await c.insert(item(1));
        await Promise.all(Array.from({ length: 6 }, (_, w) => mutate(c, 1, (d) => ({ ...d, code: 'SHARED', name: `writer ${w}` }))));
        await expect(c.insert(item(2, { code: 'SHARED' }))).rejects.toBeInstanceOf(UniqueViolation);
      });

      it('an insert refused for its duplicate id leaves the existing document\'s keys claimed', async () => {
        const c = items();
        await c.insert(item(1, { code: 'OWNED' }));
        await expect(c.insert(item(1, { code: 'OWNED' }))).rejects.toBeInstanceOf(DuplicateId);
        await expect(c.insert(item(2, { code: 'OWNED' }))).rejects.toBeInstanceOf(UniqueViolation);
      });

      it('concurrent inserts of the same id and key: one document, and the key stays taken', async () => {
        const c = items();
        const results = await Promise.allSettled(Array.from({ length: 4 }, () => c.insert(item(1, { code: 'TWIN' }))));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        await expect(c.insert(item(2, { code: 'TWIN' }))).rejects.toBeInstanceOf(UniqueViolation);
      });

      it('a key released by one document is taken by exactly one of several concurrent claimants', async () => {
        const c = items();
        const holder = await c.insert(item(1, { code: 'HANDOVER' }));
        await c.update({ ...holder, code: null });
        const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => c.insert(item(i + 2, { code: 'HANDOVER' }))));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(await c.count({ code: 'HANDOVER' })).toBe(1);
      });
    });

    describe('several unique keys added by one write (an issued document\'s number and number text)', () => {
      // Two keys per document: the code, and the code's text under another prefix.
      const paired = () =>
        store.collection<Item>({
          name: collectionName(),
          uniqueKeys: (d) => (d.code && !d.gone ? [`code:${d.tenant}:${d.code}`, `text:${d.tenant}:${d.code.toLowerCase()}`] : []),
        });

      it('an update adding both keys holds both; another document can take neither', async () => {
        const c = paired();
        const doc = await c.insert(item(1));
        const written = await c.update({ ...doc, code: 'N1' });
        expect(await c.findByUniqueKey('code:1:N1')).toEqual(written);
        expect(await c.findByUniqueKey('text:1:n1')).toEqual(written);
        await expect(c.insert(item(2, { code: 'N1' }))).rejects.toBeInstanceOf(UniqueViolation);
        const other = await c.insert(item(3));
        await expect(c.update({ ...other, code: 'n1' })).rejects.toBeInstanceOf(UniqueViolation);
      });

      it('when one of the keys is taken the write is refused and the other key is left free', async () => {
        const c = paired();
        // Holds text:1:n2 (through code "n2") but not code:1:N2.
        await c.insert(item(1, { code: 'n2' }));
        const doc = await c.insert(item(2));
        await expect(c.update({ ...doc, code: 'N2' })).rejects.toBeInstanceOf(UniqueViolation);
        expect((await c.get(2))!.code).toBeNull();
        expect(await c.findByUniqueKey('code:1:N2')).toBeNull();
        // Once the first document gives up text:1:n2, a third takes both keys at once: code:1:N2 was withdrawn
        // when the refused write failed, not left claimed by it.
        await c.update({ ...(await c.get(1))!, gone: '2026-02-02' });
        const third = await c.insert(item(3));
        expect((await c.update({ ...third, code: 'N2' })).code).toBe('N2');
        expect((await c.findByUniqueKey('code:1:N2'))?.id).toBe(3);
      });

      it('two documents racing for the same pair: exactly one holds both keys', async () => {
        const c = paired();
        const docs = [await c.insert(item(1)), await c.insert(item(2)), await c.insert(item(3))];
        const results = await Promise.allSettled(docs.map((d) => c.update({ ...d, code: 'RACE' })));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(UniqueViolation);
        const holder = await c.findByUniqueKey('code:1:RACE');
        expect(holder).not.toBeNull();
        expect((await c.findByUniqueKey('text:1:race'))?.id).toBe(holder!.id);
        expect(await c.count({ code: 'RACE' })).toBe(1);
      });
    });

    describe('increment (counters kept as a version)', () => {
      it('creates a missing document at version 1, then raises its version by one, readable at once', async () => {
        const c = store.collection<StoredDoc>({ name: collectionName() });
        expect(await c.increment(7)).toBe(1);
        expect(await c.get(7)).toEqual({ id: 7, version: 1 });
        expect(await c.increment(7)).toBe(2);
        expect((await c.get(7))?.version).toBe(2);
        expect(await c.get(8)).toBeNull();
      });

      it('is atomic: 20 concurrent increments, missing document included, give 1..20 each once', async () => {
        const c = store.collection<StoredDoc>({ name: collectionName() });
        const values = await Promise.all(Array.from({ length: 20 }, () => c.increment(3)));
        expect(values.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        expect((await c.get(3))?.version).toBe(20);
      });

      it('moves a compare-and-set token: an update from the version read before an increment conflicts', async () => {
        const c = store.collection<StoredDoc>({ name: collectionName() });
        await c.increment(1);
        const read = (await c.get(1))!;
        await c.increment(1);
        await expect(c.update(read)).rejects.toBeInstanceOf(VersionConflict);
      });
    });

    it('nextId is atomic and strictly increasing per sequence', async () => {
      const seq = `seq_${randomBytes(4).toString('hex')}`;
      const ids = await Promise.all(Array.from({ length: 25 }, () => store.nextId(seq)));
      expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(await store.nextId(`${seq}_other`)).toBe(1);
    });

    it('keeps data across a reopen', async () => {
      const name = collectionName();
      await items(name).insert(item(1, { name: 'durable' }));
      await store.close();
      store = await factory.reopen();
      expect((await items(name).get(1))?.name).toBe('durable');
    });
  });
}
