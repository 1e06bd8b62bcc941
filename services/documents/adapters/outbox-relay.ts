// The documents outbox on the shared relay (services/shared/outbox/relay.ts): events stored on documents
// go to the documents topic, keyed by the document's workspace.
import { ResourceSnapshot } from '../../../gen/invoicing/events/v1/events';
import { TOPICS } from '../../shared/bus/port';
import { OutboxSource } from '../../shared/outbox/relay';
import { Collection } from '../../shared/store/port';
import { DocumentView } from '../domain/context';
import { toDocumentMessage } from '../grpc/mapping';
import { DocumentRecord } from '../ports/documents-store';

/**
 * `view` is the one GetDocument uses: an event's document is the snapshot its write stored, joined to
 * its related documents (a credit note's invoice, a proforma's or quote's derived documents) as they are
 * when the event is published (docs/events.md).
 */
export function documentsOutbox(documents: Collection<DocumentRecord>, view?: (doc: DocumentRecord) => Promise<DocumentView>): OutboxSource<DocumentRecord> {
  return {
    name: 'documents',
    collection: documents,
    topic: TOPICS.documents,
    envelope: (doc) => ({ account_id: doc.account_id, livemode: doc.livemode }),
    resource: view ? async (object): Promise<ResourceSnapshot> => ({ document: toDocumentMessage(await view(object as unknown as DocumentRecord)) }) : undefined,
  };
}
