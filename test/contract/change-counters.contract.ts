// Change counters (services/shared/change-counters.ts), over every store adapter: a record's counter
// strictly increases with every counted write, concurrent bumps are all counted, and a counted update
// resolves only after its record is stored *and* its counter bumped — so a reader that reads the counter
// after the write is acknowledged always sees it changed.
import { randomInt } from 'node:crypto';
import { ChangeCounters, countingWrites, storeChangeCounters } from '../../services/shared/change-counters';
import { DocumentStore, mutate, StoredDoc } from '../../services/shared/store/port';

interface Thing extends StoredDoc {
  label: string;
}

/** A latch: `wait()` blocks until `open()`; `reached` resolves when someone waits. */
function latch() {
  let open!: () => void;
  let reached!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  return {
    wait: async () => {
      reached();
      await opened;
    },
    open: () => open(),
    reached: arrived,
  };
}

export function describeChangeCountersContract(name: string, open: () => Promise<DocumentStore>) {
  describe(`change counters (${name})`, () => {
    let store: DocumentStore;
    let counters: ChangeCounters;
    beforeAll(async () => {
      store = await open();
      counters = storeChangeCounters(store);
    });
    afterAll(() => store?.close());

    const freshId = () => randomInt(1, 2 ** 40);

    it('reads 0 for a record never counted; each bump strictly increases it; scopes are separate', async () => {
      const id = freshId();
      expect(await counters.read('documents', id)).toBe(0);
      await counters.bump('documents', id);
      const one = await counters.read('documents', id);
      await counters.bump('documents', id);
      const two = await counters.read('documents', id);
      expect(one).toBeGreaterThan(0);
      expect(two).toBeGreaterThan(one);
      expect(await counters.read('accounts', id)).toBe(0);
    });

    it('counts every one of concurrent bumps, the first ones racing to create the counter', async () => {
      const id = freshId();
      await Promise.all(Array.from({ length: 8 }, () => counters.bump('accounts', id)));
      expect(await counters.read('accounts', id)).toBe(8);
    });

    describe('countingWrites', () => {
      it('an update resolves only after the record is stored and its counter bumped', async () => {
        const hold = latch();
        const held: ChangeCounters = {
          read: (scope, id) => counters.read(scope, id),
          bump: async (scope, id) => {
            await hold.wait();
            await counters.bump(scope, id);
          },
        };
        const raw = store.collection<Thing>({ name: `counted_things_${freshId()}` });
        const things = countingWrites(raw, held, 'documents');
        const thing = await things.insert({ id: freshId(), label: 'a' });
        const before = await counters.read('documents', thing.id);
        let resolved = false;
        const update = things.update({ ...thing, label: 'b' }).then((t) => {
          resolved = true;
          return t;
        });
        await hold.reached;
        // The change is stored (the owner's readers see it) but not yet acknowledged.
        expect((await raw.get(thing.id))?.label).toBe('b');
        expect(resolved).toBe(false);
        expect(await counters.read('documents', thing.id)).toBe(before);
        hold.open();
        await update;
        expect(await counters.read('documents', thing.id)).toBeGreaterThan(before);
      });

      it('mutate through a counted collection bumps once per write; an insert bumps nothing', async () => {
        const things = countingWrites(store.collection<Thing>({ name: `counted_things_${freshId()}` }), counters, 'documents');
        const thing = await things.insert({ id: freshId(), label: 'a' });
        expect(await counters.read('documents', thing.id)).toBe(0);
        await mutate(things, thing.id, (t) => ({ ...t, label: 'b' }));
        await mutate(things, thing.id, (t) => ({ ...t, label: 'c' }));
        expect(await counters.read('documents', thing.id)).toBe(2);
      });

      it('a bump that fails fails the write: stored, never acknowledged', async () => {
        const failing: ChangeCounters = { read: counters.read, bump: async () => Promise.reject(new Error('store down')) };
        const raw = store.collection<Thing>({ name: `counted_things_${freshId()}` });
        const thing = await raw.insert({ id: freshId(), label: 'a' });
        await expect(countingWrites(raw, failing, 'documents').update({ ...thing, label: 'b' })).rejects.toThrow('store down');
        expect((await raw.get(thing.id))?.label).toBe('b');
      });
    });
  });
}
