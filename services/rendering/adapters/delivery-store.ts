// Deliveries as a collection of the shared document-store port: one per send request, unique by event id.
import { TOPICS } from '../../shared/bus/port';
import { OutboxSource } from '../../shared/outbox/relay';
import { Collection, DocumentStore } from '../../shared/store/port';
import { DeliveryRecord } from '../ports/mail';

export function deliveriesCollection(store: DocumentStore) {
  return store.collection<DeliveryRecord>({
    name: 'mail_deliveries',
    // The guard against a second delivery of one request: two consumers racing on a redelivered event
    // both try to insert, one wins.
    uniqueKeys: (d) => [`delivery:${d.delivery_id}`],
    // Dispatch reads queued deliveries by when they may next be attempted (due_rank), overall and per
    // workspace (lane): both orders are indexed in both store adapters.
    indexes: [
      ['delivery_id'],
      ['status', 'due_rank'],
      ['status', 'account_id', 'livemode', 'due_rank'],
      ['outbox_pending', 'outbox_order'],
      ['account_id', 'livemode', 'document_id'],
    ],
  });
}

/** The deliveries' outbox on the shared relay: outcome events go to the mail topic, keyed by workspace. */
export function deliveriesOutbox(deliveries: Collection<DeliveryRecord>): OutboxSource<DeliveryRecord> {
  return { name: 'mail_deliveries', collection: deliveries, topic: TOPICS.mail, envelope: (d) => ({ account_id: d.account_id, livemode: d.livemode }) };
}
