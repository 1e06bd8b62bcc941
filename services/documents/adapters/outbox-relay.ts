// The documents outbox on the shared relay (services/shared/outbox/relay.ts): events stored on documents
// go to the documents topic, keyed by the document's workspace.
import { TOPICS } from '../../shared/bus/port';
import { OutboxSource } from '../../shared/outbox/relay';
import { Collection } from '../../shared/store/port';
import { DocumentRecord } from '../ports/documents-store';

export function documentsOutbox(documents: Collection<DocumentRecord>): OutboxSource<DocumentRecord> {
  return {
    name: 'documents',
    collection: documents,
    topic: TOPICS.documents,
    envelope: (doc) => ({ account_id: doc.account_id, livemode: doc.livemode }),
  };
}
