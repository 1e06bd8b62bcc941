import { CREATION_KEY_INDEX, creationUniqueKeys } from '../../shared/idempotency';
import { DocumentStore } from '../../shared/store/port';
import { BankAccountRecord, CAP_SLOT_KEY, ContactRecord, ContactsStore, IdentifierQuery, LegalEntityRecord } from '../ports/contacts-store';

import { Tenant, tenantKey, tenantWhere } from '../../shared/tenant';

/** Legal entities read per step of the identifier lookup (duplicates of one identifier are few). */
const ENTITY_BATCH = 50;

export function contactsStore(store: DocumentStore): ContactsStore {
  const legalEntities = store.collection<LegalEntityRecord>({
    name: 'legal_entities',
    // The identifier lookup (contactsByIdentifier) is an index read per workspace and mode.
    indexes: [['account_id', 'livemode'], ['account_id', 'livemode', 'registration_key'], ['account_id', 'livemode', 'vat_id']],
  });
  const contacts = store.collection<ContactRecord>({
    name: 'contacts',
    indexes: [['account_id', 'livemode', 'deleted'], ['account_id', 'livemode', 'invoice_account_id'], CREATION_KEY_INDEX, ['outbox_pending', 'outbox_order']],
    uniqueKeys: creationUniqueKeys,
    // `q` (spec §4): a substring of the contact's and its legal entity's names, kept lower-cased here.
    searchField: 'search_text',
  });

  async function contactsByIdentifier(tenant: Tenant, query: IdentifierQuery, limit: number): Promise<ContactRecord[]> {
    const found: ContactRecord[] = [];
    if (!query.value || limit <= 0) return found;
    let after: number[] | undefined;
    for (;;) {
      const entities = await legalEntities.list({ where: { ...tenantWhere(tenant), [query.field]: query.value }, after, limit: ENTITY_BATCH });
      for (const entity of entities) {
        const live = await contacts.list({ where: { ...tenantWhere(tenant), invoice_account_id: entity.id, deleted: null }, limit: limit - found.length });
        found.push(...live);
        if (found.length >= limit) return found;
      }
      if (entities.length < ENTITY_BATCH) return found;
      after = [entities[entities.length - 1].id];
    }
  }

  return {
    legalEntities,
    contacts,
    contactsByIdentifier,
    bankAccounts: store.collection<BankAccountRecord>({
      name: 'bank_accounts',
      indexes: [['account_id', 'livemode', 'deleted'], CREATION_KEY_INDEX, ['outbox_pending', 'outbox_order']],
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
