import { DocumentStore } from '../../shared/store/port';
import { BankAccountRecord, CAP_SLOT_KEY, ContactRecord, ContactsStore, LegalEntityRecord } from '../ports/contacts-store';

import { tenantKey } from '../../shared/tenant';

export function contactsStore(store: DocumentStore): ContactsStore {
  return {
    legalEntities: store.collection<LegalEntityRecord>({ name: 'legal_entities', indexes: [['account_id', 'livemode']] }),
    contacts: store.collection<ContactRecord>({
      name: 'contacts',
      indexes: [['account_id', 'livemode', 'deleted'], ['account_id', 'livemode', 'invoice_account_id']],
    }),
    bankAccounts: store.collection<BankAccountRecord>({
      name: 'bank_accounts',
      indexes: [['account_id', 'livemode', 'deleted']],
      // An IBAN is unique within the workspace, a cash register's name among its cash registers, a
      // plan-cap slot among the workspace's records; deleted records release their keys.
      uniqueKeys: (b) => {
        if (b.deleted) return [];
        const slot = b.slot === undefined || b.slot === null ? [] : [`${CAP_SLOT_KEY}${tenantKey(b)}:${b.slot}`];
        if (b.account_type === 'cash') return [`cash:${tenantKey(b)}:${b.name.toLowerCase()}`, ...slot];
        return [...(b.iban ? [`iban:${tenantKey(b)}:${b.iban}`] : []), ...slot];
      },
    }),
    nextId: (kind) => store.nextId(kind === 'legal_entity' ? 'contacts.legal_entity' : kind === 'bank_account' ? 'contacts.bank_account' : 'contacts.contact'),
  };
}
