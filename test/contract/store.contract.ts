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
