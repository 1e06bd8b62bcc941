// Deliveries as a collection of the shared document-store port: one per send request, unique by event id.
import { DocumentStore } from '../../shared/store/port';
import { DeliveryRecord } from '../ports/mail';

export function deliveriesCollection(store: DocumentStore) {
  return store.collection<DeliveryRecord>({
    name: 'mail_deliveries',
    // The guard against a second delivery of one request: two consumers racing on a redelivered event
    // both try to insert, one wins.
    uniqueKeys: (d) => [`delivery:${d.delivery_id}`],
    indexes: [['delivery_id'], ['status'], ['outbox_pending'], ['account_id', 'livemode', 'document_id']],
  });
}
