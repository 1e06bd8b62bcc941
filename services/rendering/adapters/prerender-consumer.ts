// Pre-renders documents when they are issued (and when an invoice or proforma is paid: the PAID mark), so the first
// download is served from storage. A durable consumer group shared by the rendering replicas; it
// starts at the topic's end: a missed event only means that download renders on demand.
// Pre-renders are background renders: they wait while any download can use a page (docs/rendering.md).
import { EventBus, Subscription, TOPICS } from '../../shared/bus/port';
import { fromMessage } from '../../shared/events';
import { Logger } from '../../shared/logger';
import { Pdfs } from '../domain/pdfs';
import { DocKind } from '../ports/document-source';

export const PRERENDER_GROUP = 'rendering-prerender';

const PRERENDERED: Record<string, DocKind> = {
  'documents.invoice.issued': 'invoice',
  'documents.invoice.paid': 'invoice',
  'documents.credit_note.issued': 'credit_note',
  'documents.proforma.issued': 'proforma',
  'documents.proforma.paid': 'proforma',
};

export function subscribePrerender(bus: EventBus, pdfs: Pdfs, log: Logger): Promise<Subscription> {
  return bus.subscribe(TOPICS.documents, { group: PRERENDER_GROUP }, async (message) => {
    const event = fromMessage(message);
    const kind = PRERENDERED[event.type];
    const documentId = event.document_changed?.document_id;
    if (!kind || !documentId) return;
    const tenant = { account_id: event.account_id, livemode: event.livemode };
    try {
      const result = await pdfs.pdf(tenant, kind, documentId, '', { background: true });
      log.debug({ event: event.type, document_id: documentId, source: result.source }, 'pre-rendered');
    } catch (err) {
      // Not retried: the download renders on demand instead.
      log.warn({ event: event.type, document_id: documentId, err: err instanceof Error ? err.message : String(err) }, 'pre-render failed');
    }
  });
}
