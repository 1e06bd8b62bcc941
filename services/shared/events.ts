// invoicing.events.v1.Event envelopes as bus messages, keyed by account id. Services publish through an
// outbox (services/shared/outbox/), never straight after a write.
import { Event } from '../../gen/invoicing/events/v1/events';
import { BusMessage } from './bus/port';

export function toMessage(event: Event): BusMessage {
  return { key: String(event.account_id), value: Event.encode(event).finish() };
}

export function fromMessage(message: BusMessage): Event {
  return Event.decode(message.value);
}
