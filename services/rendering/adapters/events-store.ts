// The events log as collections of the shared document-store port (docs/events.md).
import { DocumentStore } from '../../shared/store/port';
import { EventRecord, EventSequenceRecord } from '../ports/events';

export function eventsCollection(store: DocumentStore) {
  return store.collection<EventRecord>({
    name: 'tenant_events',
    // One record per outbox event, however often the bus delivers it.
    uniqueKeys: (e) => [`event:${e.event_id}`],
    // Lists filter on the workspace and mode (and the type or its kind) and run newest first.
    indexes: [['event_id'], ['account_id', 'livemode', 'created_at'], ['account_id', 'livemode', 'kind', 'created_at'], ['account_id', 'livemode', 'type', 'created_at']],
  });
}

/** One counter per workspace and mode (EventsLog's sequence and the created_at that goes with it). */
export function eventSequencesCollection(store: DocumentStore) {
  return store.collection<EventSequenceRecord>({ name: 'tenant_event_sequences' });
}
