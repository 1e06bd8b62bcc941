// The events part of the rendering service (docs/events.md): the log of every change a tenant can see,
// fed from the services' outboxes through the bus, read through EventsService. It sits next to mail,
// the other outbound-delivery part: webhook deliveries (the next slice) read this log and reuse mail's
// leases, retries and fair lanes.
import { EventsServiceService } from '../../gen/invoicing/rendering/v1/events';
import { implement, restrict } from '../shared/grpc/typed';
import { CursorCodec } from '../shared/pagination';
import { consumeIntoLog } from './adapters/events-consumer';
import { eventsHandlers } from './grpc/events-handlers';
import { eventSequencesCollection, eventsCollection } from './adapters/events-store';
import { EventsLog } from './domain/events-log';
import { RenderingPart } from './part';

export const eventsPart: RenderingPart = {
  name: 'events',
  async create(deps) {
    const { adapters, log, secrets } = deps;
    const events = new EventsLog({
      events: eventsCollection(adapters.store),
      sequences: eventSequencesCollection(adapters.store),
      nextId: () => adapters.store.nextId('tenant_events'),
      clock: { now: () => new Date() },
    });
    const subscriptions = await consumeIntoLog(adapters.bus, events, () => undefined);
    return {
      bindings: [
        restrict(implement('invoicing.rendering.v1.EventsService', EventsServiceService, eventsHandlers(events, new CursorCodec(secrets.cursorSecret)), log), {
          callers: ['gateway'],
        }),
      ],
      async stop() {
        for (const s of subscriptions) await s.close();
      },
    };
  },
};
