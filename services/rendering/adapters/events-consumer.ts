// Feeds the events log from the services' topics: a durable group shared by the rendering replicas, from
// the beginning of each topic (an event published while this service was down is stored when it returns).
// The offset moves only after the event is stored (at-least-once); the log stores each event once.
import { ResourceSnapshot } from '../../../gen/invoicing/events/v1/events';
import { EventBus, Subscription, TOPICS } from '../../shared/bus/port';
import { fromMessage } from '../../shared/events';
import { EventsLog } from '../domain/events-log';

/**
 * One durable group per topic (`rendering.events.<topic>`): Kafka's assignors hand a group's partitions
 * out as if every member read every topic, so members of one group with different topics would be given
 * partitions they never read.
 */
export const eventsLogGroup = (topic: string) => `rendering.events.${topic}`;

/** The topics whose outboxes carry tenant-visible events. */
export const EVENT_SOURCE_TOPICS = [TOPICS.documents, TOPICS.contacts, TOPICS.expenses];

export async function consumeIntoLog(bus: EventBus, log: EventsLog, stored: () => void): Promise<Subscription[]> {
  return Promise.all(
    EVENT_SOURCE_TOPICS.map((topic) =>
      bus.subscribe(topic, { group: eventsLogGroup(topic), fromBeginning: true }, async (message) => {
        const event = fromMessage(message);
        const object = event.resource ? Buffer.from(ResourceSnapshot.encode(event.resource).finish()).toString('base64') : undefined;
        if (await log.record({ id: event.id, type: event.type, account_id: event.account_id, livemode: event.livemode, object })) stored();
      }),
    ),
  );
}
