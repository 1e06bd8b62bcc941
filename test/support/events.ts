// Test consumers of the event topics on a broker of a suite's own (scripts/engines.sh start-one kafka):
// what was published, as delivered, duplicates kept — the observable side of "each event exactly once".
import { randomBytes } from 'node:crypto';
import { Event } from '../../gen/invoicing/events/v1/events';
import { KafkaEventBus } from '../../services/shared/bus/kafka';
import { TOPICS } from '../../services/shared/bus/port';
import { fromMessage } from '../../services/shared/events';
import { eventually } from './api';

export interface TopicListener {
  /** The accepted events in delivery order, duplicates kept. */
  events: Event[];
  close(): Promise<void>;
}

/** Every event of `topic` from its beginning that `accept` keeps, in a consumer group of its own. */
export async function listenToTopic(broker: string, topic: string, accept: (e: Event) => boolean): Promise<TopicListener> {
  const bus = new KafkaEventBus([broker], `test-listener-${randomBytes(4).toString('hex')}`);
  const events: Event[] = [];
  await bus.subscribe(topic, { group: `test-listener-${randomBytes(6).toString('hex')}`, fromBeginning: true }, async (m) => {
    const event = fromMessage(m);
    if (accept(event)) events.push(event);
  });
  return { events, close: () => bus.close() };
}

/** A fresh broker needs a moment before it coordinates consumer groups (a gateway joins one at start). */
export async function brokerCoordinatesGroups(broker: string, timeoutMs = 60_000): Promise<void> {
  await eventually(async () => {
    const warmUp = await listenToTopic(broker, TOPICS.identity, () => false);
    await warmUp.close();
  }, timeoutMs);
}
