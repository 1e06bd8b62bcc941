// Wires the contacts/banking service: binds its store port to the shared document store.
import { BankingServiceService, ContactsServiceService } from '../../gen/invoicing/contacts/v1/contacts';
import { implement, restrict } from '../shared/grpc/typed';
import { ServiceModule } from '../shared/module';
import { CursorCodec } from '../shared/pagination';
import { contactsStore } from './adapters/contacts-store';
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
    return {
      bindings: [
        // The admin CLI suspends contacts and creates cash registers.
        restrict(
          implement('invoicing.contacts.v1.ContactsService', ContactsServiceService, contactsHandlers(new Contacts(store, entities), entities, cursors), log),
          { callers: ['gateway', 'documents', 'expenses', 'admin'] },
        ),
        restrict(implement('invoicing.contacts.v1.BankingService', BankingServiceService, bankingHandlers(new BankAccounts(store), cursors), log), {
          callers: ['gateway', 'documents', 'admin'],
        }),
      ],
    };
  },
};
