// Wires the contacts/banking service: binds its store port to the shared document store, and its outboxes
// (events of contacts and bank accounts, docs/events.md) to the bus through the shared relay.
import { BankingServiceService, ContactsServiceService } from '../../gen/invoicing/contacts/v1/contacts';
import { implement, restrict } from '../shared/grpc/typed';
import { ServiceModule } from '../shared/module';
import { CursorCodec } from '../shared/pagination';
import { outboxRelayOptions } from '../shared/outbox/options';
import { OutboxRelay } from '../shared/outbox/relay';
import { contactsStore } from './adapters/contacts-store';
import { contactsOutboxes } from './adapters/outbox';
import { BankAccounts } from './domain/bank-accounts';
import { Contacts } from './domain/contacts';
import { LegalEntities } from './domain/legal-entities';
import { bankingHandlers, contactsHandlers } from './grpc/handlers';

export const contactsModule: ServiceModule = {
  name: 'contacts',
  needs: { secrets: ['cursorSecret'], blobs: false, peers: [] },
  async create({ adapters, secrets, log }) {
    const store = contactsStore(adapters.store);
    const entities = new LegalEntities(store);
    const cursors = new CursorCodec(secrets.cursorSecret);
    // A contact's event shows its legal entity as GetContact does.
    const relay: OutboxRelay = new OutboxRelay(
      contactsOutboxes(store, async (contact) => ({ contact, entity: await entities.get(contact, contact.invoice_account_id) })),
      adapters.bus,
      log,
      outboxRelayOptions(),
    );
    const written = () => relay.notify();
    relay.start();
    return {
      bindings: [
        // The admin CLI suspends contacts and creates cash registers.
        restrict(
          implement('invoicing.contacts.v1.ContactsService', ContactsServiceService, contactsHandlers(new Contacts(store, entities, written), entities, cursors), log),
          { callers: ['gateway', 'documents', 'expenses', 'admin'] },
        ),
        restrict(implement('invoicing.contacts.v1.BankingService', BankingServiceService, bankingHandlers(new BankAccounts(store, written), cursors), log), {
          callers: ['gateway', 'documents', 'admin'],
        }),
      ],
      stop: () => relay.stop(),
    };
  },
};
