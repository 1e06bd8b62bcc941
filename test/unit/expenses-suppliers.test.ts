// The expenses service's suppliers against the real contacts service over gRPC (in process, SQLite):
// the extracted supplier is matched by the contacts service's identifier lookup however many contacts
// the workspace has, and every contact the expenses service creates is keyed so that a crash or a
// retry between "contact created" and "expense written" never makes a second contact.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ContactsServiceService } from '../../gen/invoicing/contacts/v1/contacts';
import { contactsStore } from '../../services/contacts/adapters/contacts-store';
import { Contacts } from '../../services/contacts/domain/contacts';
import { LegalEntities } from '../../services/contacts/domain/legal-entities';
import { contactsHandlers } from '../../services/contacts/grpc/handlers';
import { ContactsStore } from '../../services/contacts/ports/contacts-store';
import { GrpcSuppliers } from '../../services/expenses/adapters/grpc-suppliers';
import { ContactsSupplierMatcher } from '../../services/expenses/adapters/supplier-matcher';
import { ExtractedFields } from '../../services/expenses/ports/extractor';
import { RunningServer, startGrpcServer } from '../../services/shared/grpc/server';
import { implement } from '../../services/shared/grpc/typed';
import { createLogger } from '../../services/shared/logger';
import { CursorCodec } from '../../services/shared/pagination';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { Tenant } from '../../services/shared/tenant';

const log = createLogger('test');
const tenant: Tenant = { account_id: 41, livemode: true };
let server: RunningServer;
let store: ContactsStore;
let contacts: Contacts;
let suppliers: GrpcSuppliers;

beforeAll(async () => {
  store = contactsStore(new SqliteDocumentStore(path.join(mkdtempSync(path.join(os.tmpdir(), 'expenses-suppliers-')), 'test.db')));
  const entities = new LegalEntities(store);
  contacts = new Contacts(store, entities);
  const handlers = contactsHandlers(contacts, entities, new CursorCodec('a-test-secret-of-enough-length-123'));
  server = await startGrpcServer({ bindings: [implement('invoicing.contacts.v1.ContactsService', ContactsServiceService, handlers, log)], log, tls: null });
  suppliers = new GrpcSuppliers(server.address);
});

afterAll(async () => {
  suppliers?.close();
  await server?.shutdown(100);
});

const liveContacts = (t: Tenant = tenant) => store.contacts.count({ account_id: t.account_id, livemode: t.livemode, deleted: null });

function read(ids: Partial<ExtractedFields['supplier']>): ExtractedFields['supplier'] {
  return {
    name: 'Dodávateľ s.r.o.',
    registration_id: null,
    tax_id: null,
    vat_id: null,
    address: { street: null, municipality: null, postal_code: null, country_alpha2: null },
    ...ids,
  };
}

describe('extracted supplier matched by registration or VAT id (ListContactsByIdentifier)', () => {
  const big: Tenant = { account_id: 42, livemode: true };
  let oldest: { id: number };

  beforeAll(async () => {
    // The match is the workspace's oldest contact, behind 2 100 newer ones: the former matcher paged
    // through the newest 2 000 only and then created a duplicate.
    oldest = (await contacts.create(big, { name: 'Supplier', invoice_account: { name: 'Supplier s.r.o.', registration_id: '25596641', vat_id: 'CZ25596641' } })).contact;
    for (let n = 0; n < 2100; n++) await contacts.create(big, { name: `Customer ${n}`, invoice_account: { name: `Customer ${n}` } });
  });

  it('finds the contact by registration id beyond 2000 contacts, creating none', async () => {
    const before = await liveContacts(big);
    const matcher = new ContactsSupplierMatcher(suppliers);
    expect(await matcher.match(big, read({ registration_id: '25596641' }), 'job-reg')).toEqual({ id: oldest.id, name: 'Supplier' });
    expect(await liveContacts(big)).toBe(before);
  });

  it('finds it by VAT id written with separators, creating none', async () => {
    const before = await liveContacts(big);
    const matcher = new ContactsSupplierMatcher(suppliers);
    expect(await matcher.match(big, read({ vat_id: 'CZ 2559-6641' }), 'job-vat')).toEqual({ id: oldest.id, name: 'Supplier' });
    expect(await liveContacts(big)).toBe(before);
  });

  it('GrpcSuppliers.findByIdentifier: null for an identifier no live contact has', async () => {
    expect(await suppliers.findByIdentifier(big, { vat_id: 'SK2020317068' })).toBeNull();
    expect(await suppliers.findByIdentifier({ account_id: 43, livemode: true }, { registration_id: '25596641' })).toBeNull();
  });
});
