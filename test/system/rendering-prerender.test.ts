// Pre-rendering (docs/rendering.md): an `issued` event (and an invoice's or proforma's `paid`) renders the PDF into
// storage, so the first download is served from it; other events render nothing.
import { Event } from '../../gen/invoicing/events/v1/events';
import { MemoryEventBus } from '../../services/shared/bus/memory';
import { TOPICS } from '../../services/shared/bus/port';
import { toMessage } from '../../services/shared/events';
import { createLogger } from '../../services/shared/logger';
import { subscribePrerender } from '../../services/rendering/adapters/prerender-consumer';
import { Pdfs } from '../../services/rendering/domain/pdfs';
import { eventually } from '../support/api';
import { printable, workspace } from '../unit/rendering.fixtures';

function setup(statuses = new Map<number, string>()) {
  const bus = new MemoryEventBus();
  const stored = new Map<string, Buffer>();
  let renders = 0;
  const pdfs = new Pdfs({
    source: { document: async (_t, kind, id) => printable({ id, type: kind, status: statuses.get(id) ?? 'exposed' }), workspace: async () => workspace(), logo: async () => null },
    template: { version: 'v1', html: (view) => `<h1>${view.title}</h1>` },
    renderer: {
      render: async (html) => {
        renders++;
        return Buffer.from(html);
      },
      close: async () => undefined,
    },
    store: { get: async (key) => stored.get(key) ?? null, put: async (key, pdf) => void stored.set(key, pdf) },
  });
  return { bus, pdfs, stored, renders: () => renders };
}

const publish = (bus: MemoryEventBus, events: Event[]) => bus.publish(TOPICS.documents, events.map(toMessage));

const changed = (type: string, documentId: number): Event => ({
  id: `${type}-${documentId}`,
  sequence: documentId,
  occurred_at: new Date().toISOString(),
  type,
  account_id: 5,
  livemode: true,
  document_changed: { document_id: documentId, document_type: type.split('.')[1], status: 'exposed', number: '1', currency: 'CZK', total: '1', amount_due: '1', changed_fields: [] },
});

describe('pre-rendering on issue', () => {
  it('an issued invoice, credit note or proforma is rendered into storage; the first download is served from it', async () => {
    const { bus, pdfs, stored, renders } = setup();
    const subscription = await subscribePrerender(bus, pdfs, createLogger('test'));
    await publish(bus, [changed('documents.invoice.issued', 11), changed('documents.credit_note.issued', 12), changed('documents.proforma.issued', 13)]);
    await eventually(async () => expect(stored.size).toBe(3));
    const first = await pdfs.pdf({ account_id: 5, livemode: true }, 'invoice', 11);
    expect(first.source).toBe('store');
    expect((await pdfs.pdf({ account_id: 5, livemode: true }, 'proforma', 13)).source).toBe('store');
    expect(renders()).toBe(3);
    await subscription.close();
  });

  it('a paid invoice or proforma is rendered again (its PAID mark) before anyone downloads it', async () => {
    const statuses = new Map<number, string>();
    const { bus, pdfs, stored } = setup(statuses);
    const subscription = await subscribePrerender(bus, pdfs, createLogger('test'));
    await publish(bus, [changed('documents.invoice.issued', 21), changed('documents.proforma.issued', 22)]);
    await eventually(async () => expect(stored.size).toBe(2));
    statuses.set(21, 'paid');
    statuses.set(22, 'paid');
    await publish(bus, [changed('documents.invoice.paid', 21), changed('documents.proforma.paid', 22)]);
    await eventually(async () => expect(stored.size).toBe(4));
    expect((await pdfs.pdf({ account_id: 5, livemode: true }, 'proforma', 22)).source).toBe('store');
    await subscription.close();
  });

  it('other events (created, updated, quotes) render nothing', async () => {
    const { bus, pdfs, stored } = setup();
    const subscription = await subscribePrerender(bus, pdfs, createLogger('test'));
    await publish(bus, [changed('documents.invoice.created', 1), changed('documents.invoice.updated', 1), changed('documents.quote.accepted', 2), changed('documents.invoice.issued', 3)]);
    await eventually(async () => expect(stored.size).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stored.size).toBe(1);
    await subscription.close();
  });
});
