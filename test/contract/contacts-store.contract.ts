// The contacts store port (services/contacts/ports/contacts-store.ts) against every store adapter: the
// lookup of contacts by a legal entity's identifier (registration_key, vat_id) — what the expenses
// service matches extracted suppliers with. It must find a contact however many others the workspace
// has, keep workspaces and modes apart, skip deleted contacts and entities without a live contact, and
// answer newest first.
import { randomInt } from 'node:crypto';
import { contactsStore } from '../../services/contacts/adapters/contacts-store';
import { Contacts } from '../../services/contacts/domain/contacts';
import { LegalEntities } from '../../services/contacts/domain/legal-entities';
import { ContactsStore } from '../../services/contacts/ports/contacts-store';
import { DocumentStore } from '../../services/shared/store/port';
import { Tenant } from '../../services/shared/tenant';

export function describeContactsStoreContract(adapter: string, open: () => Promise<DocumentStore>): void {
  describe(`contacts store, lookup by identifier: ${adapter}`, () => {
    let documents: DocumentStore;
    let store: ContactsStore;
    let contacts: Contacts;
    // Every test its own workspace, so runs against a shared database never see each other.
    const freshTenant = (): Tenant => ({ account_id: randomInt(1, 2 ** 40), livemode: true });
    const ids = (rows: Array<{ id: number }>) => rows.map((r) => r.id);

    beforeAll(async () => {
      documents = await open();
      store = contactsStore(documents);
      contacts = new Contacts(store, new LegalEntities(store));
    });
    afterAll(() => documents?.close());

    it('finds the contacts of the entities with that registration_key or vat_id, newest first, at most `limit`', async () => {
      const tenant = freshTenant();
      const older = await contacts.create(tenant, { name: 'Old', invoice_account: { name: 'Acme s.r.o.', registration_id: 'HRB 123-45', vat_id: 'CZ 2559 6641' } });
      await contacts.create(tenant, { name: 'Other', invoice_account: { name: 'Other a.s.', registration_id: '99 999', vat_id: 'DE136695976' } });
      const newer = await contacts.create(tenant, { name: 'New', invoice_account: { name: 'Acme 2', registration_id: 'hrb12345' } });
      expect(older.entity.registration_key).toBe('HRB12345');
      expect(older.entity.vat_id).toBe('CZ25596641');
      expect(ids(await store.contactsByIdentifier(tenant, { field: 'registration_key', value: 'HRB12345' }, 10))).toEqual([newer.contact.id, older.contact.id]);
      expect(ids(await store.contactsByIdentifier(tenant, { field: 'registration_key', value: 'HRB12345' }, 1))).toEqual([newer.contact.id]);
      expect(ids(await store.contactsByIdentifier(tenant, { field: 'vat_id', value: 'CZ25596641' }, 10))).toEqual([older.contact.id]);
      expect(await store.contactsByIdentifier(tenant, { field: 'vat_id', value: 'CZ00000000' }, 10)).toEqual([]);
      expect(await store.contactsByIdentifier(tenant, { field: 'vat_id', value: '' }, 10)).toEqual([]);
    });

    it('keeps workspaces and live/test mode apart', async () => {
      const tenant = freshTenant();
      const sandbox = { ...tenant, livemode: false };
      const neighbour = freshTenant();
      const mine = await contacts.create(tenant, { name: 'Mine', invoice_account: { name: 'Acme', vat_id: 'SK2020317068' } });
      await contacts.create(sandbox, { name: 'Sandbox', invoice_account: { name: 'Acme', vat_id: 'SK2020317068' } });
      await contacts.create(neighbour, { name: 'Theirs', invoice_account: { name: 'Acme', vat_id: 'SK2020317068' } });
      expect(ids(await store.contactsByIdentifier(tenant, { field: 'vat_id', value: 'SK2020317068' }, 10))).toEqual([mine.contact.id]);
      expect((await store.contactsByIdentifier(sandbox, { field: 'vat_id', value: 'SK2020317068' }, 10)).map((c) => c.name)).toEqual(['Sandbox']);
    });

    it('skips deleted contacts and entities without a live contact, past a batch of such entities', async () => {
      const tenant = freshTenant();
      const live = await contacts.create(tenant, { name: 'Live', invoice_account: { name: 'Acme', registration_id: 'REG-1' } });
      // More entities with the identifier than one read of the lookup takes (50), none with a live contact.
      for (let n = 0; n < 60; n++) {
        const dead = await contacts.create(tenant, { name: `Deleted ${n}`, invoice_account: { name: 'Acme', registration_id: 'REG-1' } });
        await contacts.delete(tenant, dead.contact.id);
      }
      expect(ids(await store.contactsByIdentifier(tenant, { field: 'registration_key', value: 'REG1' }, 5))).toEqual([live.contact.id]);
    });

    it('an entity updated later is found by its new identifier, not its old one', async () => {
      const tenant = freshTenant();
      const c = await contacts.create(tenant, { name: 'Moved', invoice_account: { name: 'Acme', registration_id: 'OLD 1' } });
      await contacts.update(tenant, c.contact.id, { invoice_account: { registration_id: 'NEW.2' } });
      expect(await store.contactsByIdentifier(tenant, { field: 'registration_key', value: 'OLD1' }, 5)).toEqual([]);
      expect(ids(await store.contactsByIdentifier(tenant, { field: 'registration_key', value: 'NEW2' }, 5))).toEqual([c.contact.id]);
    });

    it('Contacts.findByIdentifier: registration id first, then VAT id, folded; a page size above 100 is refused', async () => {
      const tenant = freshTenant();
      const byVat = await contacts.create(tenant, { name: 'By VAT', invoice_account: { name: 'V', vat_id: 'CZ25596641' } });
      const byRegistration = await contacts.create(tenant, { name: 'By IČO', invoice_account: { name: 'R', registration_id: '25596641' } });
      const found = await contacts.findByIdentifier(tenant, { registration_id: ' 255 966 41 ', vat_id: 'cz-25596641' });
      expect(found.map((v) => v.contact.id)).toEqual([byRegistration.contact.id, byVat.contact.id]);
      expect(found[0].entity.name).toBe('R');
      expect((await contacts.findByIdentifier(tenant, { vat_id: 'CZ25596641' }, 1)).map((v) => v.contact.id)).toEqual([byVat.contact.id]);
      await expect(contacts.findByIdentifier(tenant, { vat_id: 'CZ25596641' }, 101)).rejects.toMatchObject({ code: 'invalid_limit' });
    });
  });
}
