// Thin handlers of invoicing.rendering.v1.MailService: what happened to a delivery, by send request or
// by document.
import { Delivery, DeliveryStatus, MailServiceService } from '../../../gen/invoicing/rendering/v1/rendering';
import { fail } from '../../shared/errors';
import { AsyncHandlers } from '../../shared/grpc/typed';
import { CursorCodec } from '../../shared/pagination';
import { requireTenant } from '../../shared/tenant';
import { Mailer } from '../domain/mailer';
import { DeliveryRecord } from '../ports/mail';

const STATUS: Record<DeliveryRecord['status'], DeliveryStatus> = {
  queued: DeliveryStatus.DELIVERY_STATUS_QUEUED,
  sent: DeliveryStatus.DELIVERY_STATUS_SENT,
  failed: DeliveryStatus.DELIVERY_STATUS_FAILED,
};

export function toDelivery(r: DeliveryRecord): Delivery {
  return {
    id: r.delivery_id,
    document_id: r.document_id,
    to: r.to,
    cc: r.cc,
    bcc: r.bcc,
    subject: r.subject,
    status: STATUS[r.status],
    error: r.status === 'failed' ? (r.last_error ?? '') : '',
    queued_at: r.queued_at,
    sent_at: r.sent_at ?? '',
    attempts: r.attempts,
    next_attempt_at: r.status === 'queued' ? r.next_attempt_at : '',
    last_error: r.status === 'queued' ? (r.last_error ?? '') : '',
    message_id: r.message_id,
    route: r.route,
    pdf_etag: r.pdf?.etag ?? '',
  };
}

export function mailHandlers(mailer: Mailer, cursors: CursorCodec): AsyncHandlers<typeof MailServiceService> {
  return {
    async getDelivery(req) {
      if (!req.id) throw fail.invalid('invalid_delivery_id', 'id is required', 'id');
      return { delivery: toDelivery(await mailer.get(requireTenant(req.tenant), req.id)) };
    },
    async listDeliveries(req) {
      const { items, page_info } = await mailer.list(requireTenant(req.tenant), req.document_id, req.page, cursors);
      return { deliveries: items.map(toDelivery), page_info };
    },
  };
}
