// The startup atomicity probe (services/shared/store/atomicity-probe.ts) the Mongo store adapter runs on
// connect: a database whose single-document writes are a read and a separate write is refused with a
// message that says why and what to run instead. (The probe passing against the serialised FerretDB is in
// test/contract/store.real.test.ts.)
import { AtomicityProbeFailed, AtomicityProbeTarget, assertAtomicWrites, PROBE_WRITERS } from '../../services/shared/store/atomicity-probe';

const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** An in-memory database; a non-atomic operation is a read, a pause and a write (FerretDB v1 without the launcher). */
function fakeDatabase(atomic: { increments: boolean; compareAndSet: boolean }): AtomicityProbeTarget & { docs: Map<string, { value: number; version: number }> } {
  const docs = new Map<string, { value: number; version: number }>();
  return {
    docs,
    create: async (id) => {
      docs.set(id, { value: 0, version: 0 });
    },
    increment: async (id) => {
      const read = docs.get(id)!.value;
      if (!atomic.increments) await yieldTurn();
      docs.set(id, { ...docs.get(id)!, value: read + 1 });
      return read + 1;
    },
    compareAndSet: async (id, from) => {
      const matches = docs.get(id)!.version === from;
      if (!atomic.compareAndSet) await yieldTurn();
      if (!matches) return false;
      docs.set(id, { ...docs.get(id)!, version: from + 1 });
      return true;
    },
    cleanUp: async (ids) => {
      for (const id of ids) docs.delete(id);
    },
  };
}

describe('startup atomicity probe', () => {
  it('passes on a database with atomic single-document writes and leaves nothing behind', async () => {
    const db = fakeDatabase({ increments: true, compareAndSet: true });
    await expect(assertAtomicWrites(db, 'probe:t')).resolves.toBeUndefined();
    expect(db.docs.size).toBe(0);
  });

  it('refuses a database whose increments are a read and a separate write, naming the serialising launcher', async () => {
    const db = fakeDatabase({ increments: false, compareAndSet: true });
    const refused = assertAtomicWrites(db, 'probe:t');
    await expect(refused).rejects.toBeInstanceOf(AtomicityProbeFailed);
    await expect(refused).rejects.toThrow(/concurrent increments of one counter returned \d+ distinct values/);
    await expect(refused).rejects.toThrow(/deploy\/engines\/ferretdb.*-serialize-writes.*refusing to start/);
    expect(db.docs.size).toBe(0);
  });

  it('refuses a database whose compare-and-set lets several writers win one version', async () => {
    const db = fakeDatabase({ increments: true, compareAndSet: false });
    await expect(assertAtomicWrites(db, 'probe:t')).rejects.toThrow(new RegExp(`${PROBE_WRITERS} concurrent compare-and-sets of one version had \\d+ winners`));
  });
});
