// The contacts service's outboxes on the shared relay (services/shared/outbox/relay.ts): the events of
// contacts and bank accounts go to invoicing.contacts.v1, keyed by workspace, each with its resource as
// GetContact / GetBankAccount answer it (docs/events.md).
import { TOPICS } from '../../shared/bus/port';
import { AnyOutboxSource, OutboxSource } from '../../shared/outbox/relay';
import { ContactView } from '../domain/contacts';
import { toBankAccountMessage, toContactMessage } from '../grpc/mapping';
import { BankAccountRecord, ContactRecord, ContactsStore } from '../ports/contacts-store';

/** `view` joins a contact to its legal entity as GetContact does (the entity as it is at publication). */
export function contactsOutboxes(store: ContactsStore, view: (contact: ContactRecord) => Promise<ContactView>): AnyOutboxSource[] {
  const envelope = (r: { account_id: number; livemode: boolean }) => ({ account_id: r.account_id, livemode: r.livemode });
  const contacts: OutboxSource<ContactRecord> = {
    name: 'contacts',
    collection: store.contacts,
    topic: TOPICS.contacts,
    envelope,
    resource: async (object) => ({ contact: toContactMessage(await view(object as unknown as ContactRecord)) }),
  };
  const bankAccounts: OutboxSource<BankAccountRecord> = {
    name: 'bank_accounts',
    collection: store.bankAccounts,
    topic: TOPICS.contacts,
    envelope,
    resource: async (object) => ({ bank_account: toBankAccountMessage(object as unknown as BankAccountRecord) }),
  };
  return [contacts, bankAccounts];
}
