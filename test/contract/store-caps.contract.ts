// Plan caps hold for what is written, under any interleaving, in every store adapter: the bank_accounts cap
// (services/contacts/domain/bank-accounts.ts) driven through the store port with a test-only latch that
// holds each create between its check and its insert until all of them have checked.
import { randomInt } from 'node:crypto';
import { contactsStore } from '../../services/contacts/adapters/contacts-store';
import { BankAccounts } from '../../services/contacts/domain/bank-accounts';
import { BankAccountRecord, ContactsStore } from '../../services/contacts/ports/contacts-store';
import { DomainError } from '../../services/shared/errors';
import { Collection, DocumentStore } from '../../services/shared/store/port';
import { Tenant } from '../../services/shared/tenant';

/** Holds the first `parties` callers until all of them have arrived; later callers pass straight through. */
function barrier(parties: number) {
  const waiting: Array<() => void> = [];
  let arrived = 0;
  return {
    arrive: (): Promise<void> => {
      arrived += 1;
      if (arrived > parties) return Promise.resolve();
      const here = new Promise<void>((resolve) => waiting.push(resolve));
      if (arrived === parties) for (const release of waiting) release();
      return here;
    },
    get arrived() {
      return arrived;
    },
  };
}

/** The contacts store with its bank-account inserts held on `latch`. */
function heldAtInsert(store: ContactsStore, latch: { arrive(): Promise<void> }): ContactsStore {
  const inner = store.bankAccounts;
  const bankAccounts: Collection<BankAccountRecord> = {
    insert: async (doc) => {
      await latch.arrive();
      return inner.insert(doc);
    },
    get: (id) => inner.get(id),
    findOne: (where) => inner.findOne(where),
    findByUniqueKey: (key) => inner.findByUniqueKey(key),
    list: (query) => inner.list(query),
    count: (where) => inner.count(where),
    update: (doc) => inner.update(doc),
    insertMany: (docs) => inner.insertMany(docs),
    increment: (id) => inner.increment(id),
    getMany: (ids) => inner.getMany(ids),
  };
  return { ...store, bankAccounts };
}

const codeOf = (r: PromiseSettledResult<unknown>) => (r.status === 'rejected' ? (r.reason as DomainError).code ?? String(r.reason) : 'created');

export function describeCapContract(adapter: string, open: () => Promise<DocumentStore>): void {
  describe(`bank_accounts cap under concurrent creates: ${adapter}`, () => {
    let store: DocumentStore;
    // Every test its own workspace, so runs against a shared database never see each other.
    const freshTenant = (): Tenant => ({ account_id: randomInt(1, 2 ** 40), livemode: true });
    const active = (s: ContactsStore, t: Tenant) => s.bankAccounts.count({ account_id: t.account_id, livemode: t.livemode, deleted: null });

    beforeAll(async () => {
      store = await open();
    });
    afterAll(() => store?.close());

    it('two creates both past the check, then both insert: exactly cap records exist, the other gets plan_limit_reached', async () => {
      const tenant = freshTenant();
      const plain = contactsStore(store);
      await new BankAccounts(plain).createCashRegister(tenant, 'Till'); // counts against the cap
      const latch = barrier(2);
      const accounts = new BankAccounts(heldAtInsert(plain, latch));
      const results = await Promise.allSettled([
        accounts.createBankAccount(tenant, { account_number: '1' }, 2),
        accounts.createBankAccount(tenant, { account_number: '2' }, 2),
      ]);
      expect(latch.arrived).toBeGreaterThanOrEqual(2); // both passed the check before either inserted
      expect(results.map(codeOf).sort()).toEqual(['created', 'plan_limit_reached']);
      expect(await active(plain, tenant)).toBe(2);
    });

    it('five creates racing for three slots: three records, two refusals', async () => {
      const tenant = freshTenant();
      const plain = contactsStore(store);
      const accounts = new BankAccounts(heldAtInsert(plain, barrier(5)));
      const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => accounts.createBankAccount(tenant, { account_number: String(10 + i) }, 3)));
      expect(results.map(codeOf).sort()).toEqual(['created', 'created', 'created', 'plan_limit_reached', 'plan_limit_reached']);
      expect(await active(plain, tenant)).toBe(3);
    });

    it('a delete frees its slot for exactly one of two racing creates; an update keeps its slot', async () => {
      const tenant = freshTenant();
      const plain = contactsStore(store);
      const setup = new BankAccounts(plain);
      const first = await setup.createBankAccount(tenant, { account_number: '1' }, 2);
      const second = await setup.createBankAccount(tenant, { account_number: '2' }, 2);
      await setup.update(tenant, second.id, { name: 'renamed' });
      await expect(setup.createBankAccount(tenant, { account_number: '3' }, 2)).rejects.toMatchObject({ code: 'plan_limit_reached' });
      await setup.delete(tenant, first.id);
      const accounts = new BankAccounts(heldAtInsert(plain, barrier(2)));
      const results = await Promise.allSettled([
        accounts.createBankAccount(tenant, { account_number: '4' }, 2),
        accounts.createBankAccount(tenant, { account_number: '5' }, 2),
      ]);
      expect(results.map(codeOf).sort()).toEqual(['created', 'plan_limit_reached']);
      expect(await active(plain, tenant)).toBe(2);
    });
  });
}
