// The outbox relay's metrics: how many records still hold unpublished events (read from the store at
// scrape time, so it is the truth whichever replica published), events published, and dead letters set aside.
import { counter, gauge, PREFIX } from '../observability/metrics';
import type { Where } from '../store/port';

/** What the depth gauge needs of an outbox source (relay.ts's OutboxSource). */
interface WatchedSource {
  name: string;
  collection: { count(where: Where): Promise<number> };
}

/** Sources of the relays running in this process (an embedded process runs several). */
const sources = new Set<WatchedSource>();

const pending = () =>
  gauge(`${PREFIX}outbox_pending_records`, 'Records whose outbox holds events not yet published, by source.', ['source'], async function () {
    await Promise.all(
      [...sources].map(async (source) => {
        // A store that cannot answer leaves the last value; the relay's own errors are logged.
        const count = await source.collection.count({ outbox_pending: true }).catch(() => undefined);
        if (count !== undefined) this.labels({ source: source.name }).set(count);
      }),
    );
  });

const published = () => counter(`${PREFIX}outbox_published_total`, 'Events the outbox relay published, by source.', ['source']);
const deadLetters = () =>
  counter(`${PREFIX}outbox_dead_letters_total`, 'Events set aside as dead letters (can never be published), by source and reason.', ['source', 'reason']);

export function watchOutboxes(watched: WatchedSource[]): () => void {
  pending();
  for (const source of watched) {
    sources.add(source);
    published().labels({ source: source.name }).inc(0);
  }
  return () => watched.forEach((s) => sources.delete(s));
}

export function countPublished(source: string, count: number): void {
  if (count > 0) published().labels({ source }).inc(count);
}

export function countDeadLetter(source: string, reason: string): void {
  deadLetters().labels({ source, reason }).inc();
}
