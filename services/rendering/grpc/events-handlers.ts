// Thin handlers of invoicing.rendering.v1.EventsService: the events log, read by the gateway.
import { ResourceSnapshot } from '../../../gen/invoicing/events/v1/events';
import { EventsServiceService, TenantEvent } from '../../../gen/invoicing/rendering/v1/events';
import { AsyncHandlers } from '../../shared/grpc/typed';
import { CursorCodec } from '../../shared/pagination';
import { requireTenant } from '../../shared/tenant';
import { EventsLog } from '../domain/events-log';
import { EventRecord } from '../ports/events';

export function toTenantEvent(r: EventRecord): TenantEvent {
  return {
    id: r.event_id,
    type: r.type,
    created_at: r.created_at,
    livemode: r.livemode,
    sequence: r.sequence,
    object: ResourceSnapshot.decode(Buffer.from(r.object, 'base64')),
  };
}

export function eventsHandlers(log: EventsLog, cursors: CursorCodec): AsyncHandlers<typeof EventsServiceService> {
  return {
    async getEvent(req) {
      return { event: toTenantEvent(await log.get(requireTenant(req.tenant), req.id)) };
    },
    async listEvents(req) {
      const { tenant, page, ...filters } = req;
      const { items, page_info } = await log.list(requireTenant(tenant), filters, page, cursors);
      return { events: items.map(toTenantEvent), page_info };
    },
  };
}
