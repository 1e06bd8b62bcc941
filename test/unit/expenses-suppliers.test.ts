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
import { expensesStore } from '../../services/expenses/adapters/expenses-store';
import { GrpcSuppliers } from '../../services/expenses/adapters/grpc-suppliers';
import { ContactsSupplierMatcher } from '../../services/expenses/adapters/supplier-matcher';
import { Expenses, ExpensesHooks } from '../../services/expenses/domain/expenses';
import { ExpensesStore } from '../../services/expenses/ports/expenses-store';
import { ExtractedFields } from '../../services/expenses/ports/extractor';
import { InlineSupplier } from '../../services/expenses/ports/suppliers';
import { IdempotencyToken } from '../../services/shared/idempotency';
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

/** The expenses domain over its own SQLite store and the real contacts service, with test hooks. */
function expensesWith(hooks: ExpensesHooks = {}): { expenses: Expenses; store: ExpensesStore } {
  const own = expensesStore(new SqliteDocumentStore(path.join(mkdtempSync(path.join(os.tmpdir(), 'expenses-store-')), 'test.db')));
  return { store: own, expenses: new Expenses(own, suppliers, { currency: async () => 'EUR' }, { now: () => new Date() }, hooks) };
}

/** Makes the first call of a hook fail as a crash would (nothing after it runs); later calls pass. */
function crashOnce(): { hook: () => Promise<void>; crashed: () => boolean } {
  let crashes = 0;
  return {
    hook: async () => {
      if (crashes++ === 0) throw new Error('crash between the contact and the expense');
    },
    crashed: () => crashes > 0,
  };
}

/** Holds the first caller until release(); later callers pass. */
function latch() {
  let release!: () => void;
  let arrived!: () => void;
  const open = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  let first = true;
  return {
    hook: async () => {
      if (!first) return;
      first = false;
      arrived();
      await open;
    },
    reached,
    release: () => release(),
  };
}

let workspace = 500;
const freshTenant = (): Tenant => ({ account_id: ++workspace, livemode: true });
const inline = (name: string): InlineSupplier => ({ contact_name: name, invoice_account: { name: `${name} s.r.o.` } });

describe('PATCH with an inline supplier on an expense without one: one contact however it is retried', () => {
  it('a crash between the contact’s creation and the expense’s write, then the retry: exactly one contact, linked', async () => {
    const t = freshTenant();
    const crash = crashOnce();
    const { expenses } = expensesWith({ afterSupplierCreated: crash.hook });
    const expense = await expenses.create(t, { note: 'receipt' }, undefined);
    await expect(expenses.update(t, expense.id, {}, inline('Supplier'))).rejects.toThrow('crash');
    expect(crash.crashed()).toBe(true);
    expect(await liveContacts(t)).toBe(1);
    const retried = await expenses.update(t, expense.id, {}, inline('Supplier'));
    expect(await liveContacts(t)).toBe(1);
    const [only] = await store.contacts.list({ where: { account_id: t.account_id, livemode: true }, limit: 10 });
    expect(retried.supplier_id).toBe(only.id);
    expect(retried.supplier_pending_key).toBeNull();
  });

  it('another write to the expense between the crash and the retry (a new revision) still makes no second contact', async () => {
    const t = freshTenant();
    const { expenses } = expensesWith({ afterSupplierCreated: crashOnce().hook });
    const expense = await expenses.create(t, {}, undefined);
    await expect(expenses.update(t, expense.id, {}, inline('Supplier'))).rejects.toThrow('crash');
    await expenses.update(t, expense.id, { note: 'edited meanwhile' }, undefined);
    const retried = await expenses.update(t, expense.id, {}, inline('Supplier'));
    expect(await liveContacts(t)).toBe(1);
    expect(retried.note).toBe('edited meanwhile');
    expect(retried.supplier_contact_name).toBe('Supplier');
  });

  it('two PATCHes racing to give the expense a supplier make one contact; the later body is what it holds', async () => {
    const t = freshTenant();
    const held = latch();
    const { expenses } = expensesWith({ afterSupplierCreated: held.hook });
    const expense = await expenses.create(t, {}, undefined);
    const first = expenses.update(t, expense.id, {}, inline('First'));
    await held.reached; // the first request's contact exists; its expense write has not happened
    const second = await expenses.update(t, expense.id, {}, inline('Second'));
    held.release();
    const firstWritten = await first;
    expect(await liveContacts(t)).toBe(1);
    expect(firstWritten.supplier_id).toBe(second.supplier_id);
    expect((await contacts.get(t, second.supplier_id!)).contact.name).toBe('Second');
  });

  it('once linked, the next inline supplier updates that contact (no new one)', async () => {
    const t = freshTenant();
    const { expenses } = expensesWith();
    const expense = await expenses.create(t, {}, undefined);
    const linked = await expenses.update(t, expense.id, {}, inline('One'));
    const again = await expenses.update(t, expense.id, {}, inline('Renamed'));
    expect(again.supplier_id).toBe(linked.supplier_id);
    expect(await liveContacts(t)).toBe(1);
    expect(again.supplier_contact_name).toBe('Renamed');
  });

  it('the contact of an earlier attempt deleted before the retry: the retry creates and links a live one', async () => {
    const t = freshTenant();
    const { expenses } = expensesWith({ afterSupplierCreated: crashOnce().hook });
    const expense = await expenses.create(t, {}, undefined);
    await expect(expenses.update(t, expense.id, {}, inline('Gone'))).rejects.toThrow('crash');
    const [orphan] = await store.contacts.list({ where: { account_id: t.account_id, livemode: true }, limit: 10 });
    await contacts.delete(t, orphan.id);
    const retried = await expenses.update(t, expense.id, {}, inline('Gone'));
    expect(retried.supplier_id).not.toBe(orphan.id);
    expect((await contacts.get(t, retried.supplier_id!)).contact.name).toBe('Gone');
    expect(await liveContacts(t)).toBe(1);
  });
});

describe('POST with an inline supplier under an Idempotency-Key, through the contacts service', () => {
  it('a crash between the contact and the expense, then the retry under the same key: one contact, linked', async () => {
    const t = freshTenant();
    const { expenses, store: own } = expensesWith();
    const token: IdempotencyToken = { key: 'Z3Vlc3NlZC1rZXktb2YtdGhlLWdhdGV3YXktMDEyMzQ1', fingerprint: 'ZmluZ2VycHJpbnQ' };
    const insert = own.expenses.insert.bind(own.expenses);
    own.expenses.insert = async () => {
      throw new Error('crash');
    };
    await expect(expenses.create(t, {}, inline('Keyed'), token)).rejects.toThrow('crash');
    own.expenses.insert = insert;
    const retried = await expenses.create(t, {}, inline('Keyed'), token);
    expect(await liveContacts(t)).toBe(1);
    const [only] = await store.contacts.list({ where: { account_id: t.account_id, livemode: true }, limit: 10 });
    expect(retried.supplier_id).toBe(only.id);
  });
});

describe('extraction: the supplier a job creates is keyed by the job', () => {
  it('the job run again (after a crash before its result was written) answers the same contact', async () => {
    const t = freshTenant();
    const matcher = new ContactsSupplierMatcher(suppliers);
    // No identifier to match by: only the job's key keeps the re-run from creating a second contact.
    const first = await matcher.match(t, read({ name: 'Kaviareň u Mlyna' }), 'a7d6f0a2-8b1c-4c1e-9f0e-5d2b7c3e1f00');
    const rerun = await matcher.match(t, read({ name: 'Kaviareň u Mlyna' }), 'a7d6f0a2-8b1c-4c1e-9f0e-5d2b7c3e1f00');
    expect(rerun).toEqual(first);
    expect(await liveContacts(t)).toBe(1);
    await matcher.match(t, read({ name: 'Kaviareň u Mlyna' }), 'another-job');
    expect(await liveContacts(t)).toBe(2);
  });
});
