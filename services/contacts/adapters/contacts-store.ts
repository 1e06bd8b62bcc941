import { CREATION_KEY_INDEX, creationUniqueKeys } from '../../shared/idempotency';
import { DocumentStore } from '../../shared/store/port';
import { BankAccountRecord, CAP_SLOT_KEY, ContactRecord, ContactsStore, LegalEntityRecord } from '../ports/contacts-store';

import { tenantKey } from '../../shared/tenant';

export function contactsStore(store: DocumentStore): ContactsStore {
  return {
    legalEntities: store.collection<LegalEntityRecord>({ name: 'legal_entities', indexes: [['account_id', 'livemode']] }),
    contacts: store.collection<ContactRecord>({
      name: 'contacts',
      indexes: [['account_id', 'livemode', 'deleted'], ['account_id', 'livemode', 'invoice_account_id'], CREATION_KEY_INDEX],
      uniqueKeys: creationUniqueKeys,
    }),
    bankAccounts: store.collection<BankAccountRecord>({
      name: 'bank_accounts',
      indexes: [['account_id', 'livemode', 'deleted'], CREATION_KEY_INDEX],
      // An IBAN is unique within the workspace, a cash register's name among its cash registers, a
      // plan-cap slot among the workspace's records; deleted records release their keys (not the
      // Idempotency-Key they were created under).
      uniqueKeys: (b) => {
        const created = creationUniqueKeys(b);
        if (b.deleted) return created;
        const slot = b.slot === undefined || b.slot === null ? [] : [`${CAP_SLOT_KEY}${tenantKey(b)}:${b.slot}`];
        if (b.account_type === 'cash') return [...created, `cash:${tenantKey(b)}:${b.name.toLowerCase()}`, ...slot];
        return [...created, ...(b.iban ? [`iban:${tenantKey(b)}:${b.iban}`] : []), ...slot];
      },
    }),
    nextId: (kind) => store.nextId(kind === 'legal_entity' ? 'contacts.legal_entity' : kind === 'bank_account' ? 'contacts.bank_account' : 'contacts.contact'),
  };
}
