// Startup atomicity probe of a document database. Gapless numbering, compare-and-set updates and unique
// keys all rest on single-document writes being atomic. FerretDB v1 executes an update as a read and a
// separate write, so concurrent increments hand out duplicates; only the project's launcher
// (deploy/engines/ferretdb, `-serialize-writes`, on by default) makes them atomic. A service that cannot
// trust its database refuses to start rather than corrupt sequences.

/** The two single-document operations the store relies on, on a scratch document of the probe's own. */
export interface AtomicityProbeTarget {
  /** Creates scratch document `id` with counter 0 and version 0. */
  create(id: string): Promise<void>;
  /** Atomically increments the counter of `id` and returns the new value. */
  increment(id: string): Promise<number>;
  /** Writes version `from + 1` iff the stored version is `from`; true when this call wrote it. */
  compareAndSet(id: string, from: number): Promise<boolean>;
  /** Removes the probe's scratch documents. */
  cleanUp(ids: string[]): Promise<void>;
}

export class AtomicityProbeFailed extends Error {
  constructor(detail: string) {
    super(
      `the database failed the startup atomicity probe (${detail}): its single-document writes are not atomic, ` +
        'so gapless numbering, compare-and-set updates and unique keys would be corrupted. ' +
        "FerretDB v1 is atomic only behind the project's serialising launcher (deploy/engines/ferretdb, -serialize-writes); " +
        'refusing to start',
    );
    this.name = 'AtomicityProbeFailed';
  }
}

/**
 * Eight concurrent writers were enough for FerretDB v1 to hand out duplicates (docs/engines.md). The probe
 * is kept small because it runs at every start and, on a serialised FerretDB, queues behind live writes.
 */
export const PROBE_WRITERS = 8;

/**
 * Races PROBE_WRITERS increments of one counter (they must return 1..N, each once) and PROBE_WRITERS
 * compare-and-sets of one version (exactly one must win), `rounds` times each. Throws AtomicityProbeFailed.
 */
export async function assertAtomicWrites(target: AtomicityProbeTarget, prefix: string, rounds = 1): Promise<void> {
  const ids: string[] = [];
  try {
    const counter = `${prefix}:counter`;
    ids.push(counter);
    await target.create(counter);
    const values = await Promise.all(Array.from({ length: PROBE_WRITERS * rounds }, () => target.increment(counter)));
    const distinct = new Set(values).size;
    if (distinct !== values.length) {
      throw new AtomicityProbeFailed(`${values.length} concurrent increments of one counter returned ${distinct} distinct values`);
    }
    for (let round = 0; round < rounds; round++) {
      const doc = `${prefix}:cas:${round}`;
      ids.push(doc);
      await target.create(doc);
      const wins = (await Promise.all(Array.from({ length: PROBE_WRITERS }, () => target.compareAndSet(doc, 0)))).filter(Boolean).length;
      if (wins !== 1) throw new AtomicityProbeFailed(`${PROBE_WRITERS} concurrent compare-and-sets of one version had ${wins} winners`);
    }
  } finally {
    await target.cleanUp(ids).catch(() => undefined);
  }
}
