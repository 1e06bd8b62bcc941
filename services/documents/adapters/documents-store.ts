import { countingWrites, storeChangeCounters } from '../../shared/change-counters';
import { CREATION_KEY_INDEX, creationUniqueKeys } from '../../shared/idempotency';
import { DocumentStore } from '../../shared/store/port';
import { mailAllowanceSpec } from '../domain/mail-allowance';
import { DocumentRecord, DocumentsStore, MailAllowanceCounter, NUMBER_TEXT_KEY, SequenceRecord, SettingsRecord } from '../ports/documents-store';

const mode = (livemode: boolean) => (livemode ? 'live' : 'test');

export function documentsStore(store: DocumentStore): DocumentsStore {
  return {
    // Every write of a document bumps its change counter before it resolves: the rendering service
    // validates its cached ETags against it (services/shared/change-counters.ts).
    documents: countingWrites(store.collection<DocumentRecord>({
      name: 'documents',
      // The last guards of numbering: one document per (type, year, counter), and per number text
      // (two number formats can print the same text). And one document per Idempotency-Key that
      // created one (services/shared/idempotency.ts).
      uniqueKeys: (d) => [
        ...creationUniqueKeys(d),
        ...(d.sequence_number !== null && d.sequence_year !== null
          ? [`number:${d.account_id}:${mode(d.livemode)}:${d.type}:${d.sequence_year}:${d.sequence_number}`]
          : []),
        ...(d.number !== null ? [`${NUMBER_TEXT_KEY}${d.account_id}:${mode(d.livemode)}:${d.type}:${d.number}`] : []),
      ],
      indexes: [['account_id', 'livemode', 'type', 'deleted'], ['outbox_pending', 'outbox_order'], ['account_id', 'livemode', 'proforma_id'], ['account_id', 'livemode', 'quote_id'], CREATION_KEY_INDEX],
    }), storeChangeCounters(store), 'documents'),
    sequences: store.collection<SequenceRecord>({
      name: 'document_sequences',
      uniqueKeys: (s) => [`seq:${s.account_id}:${mode(s.livemode)}:${s.type}:${s.year}`],
      indexes: [['account_id', 'livemode', 'type', 'year']],
    }),
    settings: store.collection<SettingsRecord>({ name: 'document_settings' }),
    mailAllowance: store.collection<MailAllowanceCounter>(mailAllowanceSpec),
    nextId: (sequence) => store.nextId(sequence),
  };
}
