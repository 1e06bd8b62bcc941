// Builds and publishes invoicing.events.v1.Event envelopes on the bus, keyed by account id.
import { randomUUID } from 'node:crypto';
import { Event } from '../../gen/invoicing/events/v1/events';
import { BusMessage, EventBus } from './bus/port';

export type EventBody = Omit<Event, 'id' | 'occurred_at'>;

export function envelope(body: EventBody): Event {
  return { ...body, id: randomUUID(), occurred_at: new Date().toISOString() };
}

export function toMessage(event: Event): BusMessage {
  return { key: String(event.account_id), value: Event.encode(event).finish() };
}

export function fromMessage(message: BusMessage): Event {
  return Event.decode(message.value);
}

export async function publishEvents(bus: EventBus, topic: string, bodies: EventBody[]): Promise<void> {
  await bus.publish(topic, bodies.map((b) => toMessage(envelope(b))));
}
