// Consumes the mail service's outcomes (invoicing.mail.v1: mail.delivery.sent|failed) and records them
// on the invoice as email_status / email_error. Durable group, from the beginning of the topic: an
// outcome published while this service was down is applied when it returns. Idempotent (see
// domain/email-status.ts), so at-least-once delivery is enough.
import { EventBus, Subscription, TOPICS } from '../../shared/bus/port';
import { fromMessage } from '../../shared/events';
import { Collection, mutate } from '../../shared/store/port';
import { applyDeliveryOutcome } from '../domain/email-status';
import { EventFactory, withEvents } from '../domain/records';
import { DocumentRecord } from '../ports/documents-store';

export const MAIL_OUTCOMES_GROUP = 'documents.mail-outcomes';

/**
 * The outcome lands on the invoice with its event (invoice.email_delivered|email_failed, the tenant's
 * email.delivered|failed) in the same write; `relay` is woken to publish it.
 */
export async function consumeMailOutcomes(bus: EventBus, documents: Collection<DocumentRecord>, events: EventFactory, relay: { notify(): void }): Promise<Subscription> {
  return bus.subscribe(TOPICS.mail, { group: MAIL_OUTCOMES_GROUP, fromBeginning: true }, async (message) => {
    const event = fromMessage(message);
    const outcome = event.email_delivery_changed;
    if (!outcome || (outcome.status !== 'sent' && outcome.status !== 'failed')) return;
    await mutate(documents, outcome.document_id, (doc) => {
      // The outcome belongs to this workspace and mode's invoice, or to nothing here.
      if (doc.account_id !== event.account_id || doc.livemode !== event.livemode) return null;
      const applied = applyDeliveryOutcome(doc, { delivery_id: outcome.delivery_id, status: outcome.status as 'sent' | 'failed', error: outcome.error });
      return applied && withEvents(applied, events.emailOutcome(applied, outcome.status as 'sent' | 'failed'));
    });
    relay.notify();
  });
}
