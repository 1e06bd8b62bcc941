// Contacts and bank accounts carry their events (docs/events.md) in their outbox: appended by the write
// that makes the change, with the record as that write left it; a refused change appends nothing; a
// retried create under an Idempotency-Key makes no second event.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { contactsStore } from '../../services/contacts/adapters/contacts-store';
import { BankAccounts } from '../../services/contacts/domain/bank-accounts';
import { Contacts } from '../../services/contacts/domain/contacts';
import { LegalEntities } from '../../services/contacts/domain/legal-entities';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { Tenant } from '../../services/shared/tenant';

const tenant: Tenant = { account_id: 9, livemode: false };

function service() {
  const store = contactsStore(new SqliteDocumentStore(path.join(mkdtempSync(path.join(os.tmpdir(), 'contacts-events-')), 'test.db')));
  let wakes = 0;
  const written = () => void wakes++;
  return { store, contacts: new Contacts(store, new LegalEntities(store), written), bankAccounts: new BankAccounts(store, written), wakes: () => wakes };
}

describe('contact events', () => {
  it('created, updated, deleted: each in the write that makes it, with the contact as that write left it; the relay is woken', async () => {
    const s = service();
    const key = { key: randomBytes(8).toString('hex'), fingerprint: 'fp' };
    const { contact } = await s.contacts.create(tenant, { name: 'A', invoice_account: { name: 'A s.r.o.' } }, key);
    await s.contacts.create(tenant, { name: 'A', invoice_account: { name: 'A s.r.o.' } }, key); // a retry: no second event
    await s.contacts.update(tenant, contact.id, { name: 'B' });
    await s.contacts.delete(tenant, contact.id);
    const stored = (await s.store.contacts.get(contact.id))!;
    expect(stored.outbox!.map((e) => [e.type, e.seq])).toEqual([
      ['contacts.contact.created', 1],
      ['contacts.contact.updated', 2],
      ['contacts.contact.deleted', 3],
    ]);
    expect(stored.outbox!.map((e) => [e.object!.name, e.object!.deleted === null])).toEqual([['A', true], ['B', true], ['B', false]]);
    expect(stored.outbox![2].object).toMatchObject({ deleted: stored.deleted, account_id: 9, livemode: false });
    expect(stored.outbox![2].object).not.toHaveProperty('outbox');
    expect(s.wakes()).toBeGreaterThanOrEqual(3);
  });

  it('a refused change appends nothing: a suspended contact’s update', async () => {
    const s = service();
    const { contact } = await s.contacts.create(tenant, { name: 'A', invoice_account: { name: 'A s.r.o.' } });
    await s.contacts.setSuspended(tenant, contact.id, true);
    await expect(s.contacts.update(tenant, contact.id, { name: 'B' })).rejects.toMatchObject({ code: 'contact_suspended' });
    expect((await s.store.contacts.get(contact.id))!.outbox!.map((e) => e.type)).toEqual(['contacts.contact.created', 'contacts.contact.updated']);
  });
});

describe('bank account events', () => {
  it('created (also a cash register), updated, deleted; a refused create (IBAN taken) writes nothing', async () => {
    const s = service();
    const account = await s.bankAccounts.createBankAccount(tenant, { iban: 'DE89370400440532013000' }, undefined);
    await s.bankAccounts.update(tenant, account.id, { name: 'Main' });
    await s.bankAccounts.delete(tenant, account.id);
    const stored = (await s.store.bankAccounts.get(account.id))!;
    expect(stored.outbox!.map((e) => e.type)).toEqual(['contacts.bank_account.created', 'contacts.bank_account.updated', 'contacts.bank_account.deleted']);
    expect(stored.outbox![1].object).toMatchObject({ id: account.id, name: 'Main', deleted: null });
    const cash = await s.bankAccounts.createCashRegister(tenant, 'Till');
    expect(cash.outbox!.map((e) => e.type)).toEqual(['contacts.bank_account.created']);
    await s.bankAccounts.createBankAccount(tenant, { iban: 'GB82WEST12345698765432' }, undefined);
    await expect(s.bankAccounts.createBankAccount(tenant, { iban: 'GB82WEST12345698765432' }, undefined)).rejects.toMatchObject({ code: 'iban_taken' });
    expect(await s.store.bankAccounts.count({ account_id: 9 })).toBe(3);
  });
});
