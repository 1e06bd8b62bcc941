// /accounts/:account_id/events — the events log (docs/events.md): read-only, newest first. The event's
// resource comes as the service's message and is shown by the very presenter its GET uses, so
// `data.object` is what that GET answered right after the change.
import { ResourceSnapshot } from '../../gen/invoicing/events/v1/events';
import { TenantEvent } from '../../gen/invoicing/rendering/v1/events';
import { HttpError } from '../http/errors';
import { listEnvelope, pageQuery } from '../http/ids';
import { presentBankAccount, presentContact } from './contacts';
import { presentDocument } from './document-presenters';
import { presentExpense } from './expense-presenters';
import { RouteSpec } from './route';

const BASE = '/accounts/:account_id/events';

function presentObject(o: ResourceSnapshot | undefined) {
  if (o?.document) return presentDocument(o.document);
  if (o?.contact) return presentContact(o.contact);
  if (o?.bank_account) return presentBankAccount(o.bank_account);
  if (o?.expense) return presentExpense(o.expense);
  throw new Error('an event without its resource');
}

export function presentEvent(e: TenantEvent) {
  return { id: e.id, type: e.type, created_at: e.created_at, mode: e.livemode ? 'live' : 'test', sequence: e.sequence, data: { object: presentObject(e.object) } };
}

/** A query parameter given at most once, as text ('' when absent). */
function single(query: Record<string, unknown>, name: string): string {
  const value = query[name];
  if (value === undefined) return '';
  if (typeof value !== 'string') throw new HttpError(422, 'invalid_type', `${name} must be given once, as a string`, { field: name });
  return value;
}

export const eventRoutes: RouteSpec[] = [
  {
    method: 'get',
    path: BASE,
    operationId: 'listEvents',
    scope: ['read', 'events'],
    handle: async (ctx, { events }) => {
      const q = ctx.query;
      const res = await events.listEvents(
        {
          tenant: ctx.tenant,
          page: pageQuery(q),
          type: single(q, 'type'),
          created_at_gte: single(q, 'created_at[gte]'),
          created_at_gt: single(q, 'created_at[gt]'),
          created_at_lte: single(q, 'created_at[lte]'),
          created_at_lt: single(q, 'created_at[lt]'),
        },
        { requestId: ctx.requestId },
      );
      return { status: 200, body: listEnvelope(res.events.map(presentEvent), res.page_info) };
    },
  },
  {
    method: 'get',
    path: `${BASE}/:event_id`,
    operationId: 'getEvent',
    scope: ['read', 'events'],
    handle: async (ctx, { events }) => {
      const id = ctx.params.event_id ?? '';
      if (!/^evt_[0-9a-f]{32}$/.test(id)) throw new HttpError(404, 'resource_not_found', 'event not found');
      const res = await events.getEvent({ tenant: ctx.tenant, id }, { requestId: ctx.requestId });
      return { status: 200, body: presentEvent(res.event!) };
    },
  },
];
