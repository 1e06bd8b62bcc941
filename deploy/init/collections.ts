// The collections every service declares, read from the services' own store factories (never restated
// here): a recording DocumentStore collects each CollectionSpec the factories ask for.
import { contactsStore } from '../../services/contacts/adapters/contacts-store';
import { documentsStore } from '../../services/documents/adapters/documents-store';
import { identityStore } from '../../services/identity/adapters/identity-store';
import { deliveriesCollection } from '../../services/rendering/adapters/delivery-store';
import { eventSequencesCollection, eventsCollection } from '../../services/rendering/adapters/events-store';
import { declaredIndexes } from '../../services/shared/store/mongo';
import { Collection, CollectionSpec, DocumentStore, StoredDoc } from '../../services/shared/store/port';

/** A service's store factory: builds its collections from a DocumentStore. A new service adds its own here. */
const FACTORIES: Array<(store: DocumentStore) => unknown> = [identityStore, contactsStore, documentsStore, deliveriesCollection, eventsCollection, eventSequencesCollection];

export interface DeclaredCollection {
  name: string;
  /** Field lists of the collection's indexes (CollectionSpec.indexes). */
  indexes: string[][];
}

export function declaredCollections(): DeclaredCollection[] {
  const declared = new Map<string, DeclaredCollection>();
  const recorder: DocumentStore = {
    collection<T extends StoredDoc>(spec: CollectionSpec<T>): Collection<T> {
      const known = declared.get(spec.name)?.indexes ?? [];
      declared.set(spec.name, { name: spec.name, indexes: [...known, ...declaredIndexes(spec)] });
      return new Proxy({} as Collection<T>, {
        get: () => () => {
          throw new Error('the recording store only collects collection specs');
        },
      });
    },
    nextId: () => Promise.reject(new Error('the recording store only collects collection specs')),
    reserveIds: () => Promise.reject(new Error('the recording store only collects collection specs')),
    close: () => Promise.resolve(),
  };
  for (const factory of FACTORIES) factory(recorder);
  return [...declared.values()];
}
