// The expenses domain, pure and over the SQLite store: list order (issue_date descending, undated
// first, ties by id) and its keyset pages under concurrent inserts, the status-set merge, search
// folding, nested items (expense_items_attributes) and their totals, and creates under an
// Idempotency-Key with an inline supplier.
import { Metadata } from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expensesStore } from '../../services/expenses/adapters/expenses-store';
import { Expenses } from '../../services/expenses/domain/expenses';
import { composeFields } from '../../services/expenses/domain/fields';
import { compareListOrder, filterKeyOf, foldText, keysetOf, mergeInOrder, normaliseFilters, NO_ISSUE_DATE, searchTextOf, sortDateOf } from '../../services/expenses/domain/listing';
import { ExpenseRecord, ExtractionStatus } from '../../services/expenses/ports/expenses-store';
import { InlineSupplier, SupplierContact, Suppliers } from '../../services/expenses/ports/suppliers';
import { DomainError } from '../../services/shared/errors';
import { readIdempotency, writeIdempotency } from '../../services/shared/grpc/idempotency';
import { IdempotencyToken } from '../../services/shared/idempotency';
import { CursorCodec } from '../../services/shared/pagination';
import { mutate } from '../../services/shared/store/port';
import { SqliteDocumentStore } from '../../services/shared/store/sqlite';
import { Tenant } from '../../services/shared/tenant';

const tenant: Tenant = { account_id: 7, livemode: true };

/** A token as the contacts service receives it: through gRPC metadata, which drops a malformed one. */
function transported(token: IdempotencyToken | undefined): IdempotencyToken | undefined {
  const metadata = new Metadata();
  writeIdempotency(metadata, token);
  return readIdempotency(metadata);
}

/** Contacts as the contacts service keeps them: creates under a token answer the first contact. */
class FakeSuppliers implements Suppliers {
  contacts = new Map<number, SupplierContact>();
  private byToken = new Map<string, SupplierContact>();
  private next = 100;
  async find(_t: Tenant, id: number) {
    return this.contacts.get(id) ?? null;
  }
  async findByIdentifier() {
    return null;
  }
  async create(_t: Tenant, s: InlineSupplier, sent?: IdempotencyToken) {
    const token = transported(sent);
    const earlier = token && this.byToken.get(token.key);
    if (earlier) return earlier;
    const contact = { id: this.next++, name: s.contact_name || s.invoice_account.name || '' };
    this.contacts.set(contact.id, contact);
    if (token) this.byToken.set(token.key, contact);
    return contact;
  }
  async update(_t: Tenant, id: number, s: InlineSupplier) {
    const current = this.contacts.get(id);
    if (!current) return null;
    const next = { id, name: s.contact_name ?? s.invoice_account.name ?? current.name };
    this.contacts.set(id, next);
    return next;
  }
}

/** The documents service's answer for the workspace currency (a Czech workspace). */
const workspace = { currency: async () => 'CZK' };

function service() {
  const store = expensesStore(new SqliteDocumentStore(path.join(mkdtempSync(path.join(os.tmpdir(), 'expenses-unit-')), 'test.db')));
  const suppliers = new FakeSuppliers();
  return { store, suppliers, expenses: new Expenses(store, suppliers, workspace, { now: () => new Date() }) };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'no error',
    (err: unknown) => (err instanceof DomainError ? err.code : String(err)),
  );
}

const cursors = new CursorCodec('a-test-secret-of-enough-length-123');

/** Every page of the list, with `between(pageIndex)` run after each page (concurrent writers). */
async function allPages(expenses: Expenses, limit: number, between: (page: number) => Promise<void> = async () => {}, search = '', statuses: ExtractionStatus[] = []) {
  const filters = normaliseFilters(search, statuses);
  const key = filterKeyOf(tenant, filters);
  const seen: ExpenseRecord[] = [];
  let token = '';
  for (let page = 0; ; page++) {
    const resolved = cursors.resolve({ page_size: limit, page_token: token }, key);
    const rows = await expenses.list(tenant, filters, resolved);
    const { items, page_info } = cursors.page(rows, resolved.limit, keysetOf, key);
    seen.push(...items);
    await between(page);
    if (!page_info.has_more) return seen;
    token = page_info.next_page_token;
  }
}

describe('list order: issue_date descending, undated first, then id descending', () => {
  it('sortDateOf puts undated expenses above every date', () => {
    expect(sortDateOf(null)).toBe(NO_ISSUE_DATE);
    expect(NO_ISSUE_DATE > '2999-12-31').toBe(true);
    const rows = [
      { id: 1, sort_date: '2024-01-01' },
      { id: 2, sort_date: sortDateOf(null) },
      { id: 3, sort_date: '2024-01-01' },
      { id: 4, sort_date: '2025-06-30' },
      { id: 5, sort_date: sortDateOf(null) },
    ];
    expect([...rows].sort(compareListOrder).map((r) => r.id)).toEqual([5, 2, 4, 3, 1]);
  });

  it('mergeInOrder: the first rows of the union of per-status lists, in list order', () => {
    const a = [{ id: 9, sort_date: '2024-05-01' }, { id: 2, sort_date: '2024-01-01' }];
    const b = [{ id: 4, sort_date: NO_ISSUE_DATE }, { id: 8, sort_date: '2024-01-01' }];
    expect(mergeInOrder([a, b], 3).map((r) => r.id)).toEqual([4, 9, 8]);
  });

  it('pages through ties and undated expenses in exactly that order', async () => {
    const { expenses } = service();
    const dates = [null, '2024-01-01', '2024-01-01', null, '2023-12-31', '2024-01-01', '2025-02-02', null];
    for (const issue_date of dates) await expenses.create(tenant, { issue_date }, undefined);
    const listed = await allPages(expenses, 3);
    const expected = [...listed].sort(compareListOrder);
    expect(listed.map((r) => r.id)).toEqual(expected.map((r) => r.id));
    expect(listed.map((r) => r.issue_date)).toEqual([null, null, null, '2025-02-02', '2024-01-01', '2024-01-01', '2024-01-01', '2023-12-31']);
  });

  it('inserts between page fetches (before, after and at the cursor) never make a page skip or repeat a row', async () => {
    const { expenses } = service();
    for (const issue_date of ['2024-03-01', '2024-02-01', '2024-02-01', null, '2024-01-01', '2024-02-01', '2023-01-01']) {
      await expenses.create(tenant, { issue_date }, undefined);
    }
    const before = new Set((await allPages(expenses, 100)).map((r) => r.id));
    // Each gap adds rows that sort before the cursor (undated, newer), at its date (a tie with a
    // higher id: sorts before it) and after it (older): the latter must appear, the others not repeat.
    const added: ExpenseRecord[] = [];
    const listed = await allPages(expenses, 2, async () => {
      for (const issue_date of [null, '2030-01-01', '2024-02-01', '2022-06-01']) added.push(await expenses.create(tenant, { issue_date }, undefined));
    });
    const ids = listed.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length); // no duplicates
    for (const id of before) expect(ids).toContain(id); // nothing that existed is skipped
    expect(ids).toEqual([...listed].sort(compareListOrder).map((r) => r.id)); // one consistent order
    expect(added.some((r) => ids.includes(r.id))).toBe(true); // rows behind the cursor do show up
  });

  it('a status set pages through the merged lists without skip or repeat', async () => {
    const { store, expenses } = service();
    const statuses: ExtractionStatus[] = ['pending', 'failed', 'completed', 'manual', 'pending', 'failed', 'failed', 'manual'];
    for (const [i, status] of statuses.entries()) {
      const e = await expenses.create(tenant, { issue_date: i % 3 === 0 ? null : `2024-0${(i % 5) + 1}-01` }, undefined);
      await mutate(store.expenses, e.id, (r) => ({ ...r, extraction_status: status }));
    }
    const listed = await allPages(expenses, 2, undefined, '', ['failed', 'pending']);
    expect(listed.map((r) => r.extraction_status).sort()).toEqual(['failed', 'failed', 'failed', 'pending', 'pending']);
    expect(listed.map((r) => r.id)).toEqual([...listed].sort(compareListOrder).map((r) => r.id));
  });
});

describe('search folding', () => {
  it('lower-cases, removes diacritics, folds and trims whitespace', () => {
    expect(foldText('  Příbram\t\n  ŽLUŤOUČKÝ   kůň ')).toBe('pribram zlutoucky kun');
    expect(foldText('Straße ＦＶ-１')).toBe('straße fv-1');
  });

  it('searches document number, variable symbol, supplier names and note, one field per line', () => {
    const text = searchTextOf({
      document_number: 'FV-2024/17',
      variable_symbol: '2024017',
      supplier_contact_name: 'Kancelářské potřeby',
      supplier: { name: 'KANCELÁŘSKÉ POTŘEBY s.r.o.', registration_id: null, tax_id: null, vat_id: null, address: { street: null, municipality: null, postal_code: null, country_alpha2: null } },
      note: 'Toner  and\npaper',
    });
    expect(text.split('\n')).toEqual(['fv-2024/17', '2024017', 'kancelarske potreby', 'kancelarske potreby s.r.o.', 'toner and paper']);
  });

  it('the cursor is bound to the folded filters: the same search spelled differently shares cursors', () => {
    const a = filterKeyOf(tenant, normaliseFilters('  ACME  s.r.o. ', ['manual', 'pending']));
    const b = filterKeyOf(tenant, normaliseFilters('acme s.r.o.', ['pending', 'manual', 'pending']));
    expect(a).toBe(b);
    expect(filterKeyOf(tenant, normaliseFilters('acme', []))).not.toBe(a);
  });
});

describe('expense_items_attributes and totals', () => {
  const base = composeFields(null, {
    currency: 'CZK',
    items: [
      { name: 'A', quantity: '2', unit_price: '10.005', vat_rate: '21' },
      { name: 'B', unit_price: '100', vat_rate: '12' },
    ],
  });

  it('prices lines and totals by the shared rules (VAT once per rate)', () => {
    expect(base.items.map((i) => [i.id, i.net_amount])).toEqual([[1, '20.01'], [2, '100.00']]);
    expect(base.totals).toEqual({
      subtotal: '120.01',
      vat_total: '16.20',
      total: '136.21',
      vat_breakdown: [
        { vat_rate: '21', base: '20.01', vat: '4.20' },
        { vat_rate: '12', base: '100.00', vat: '12.00' },
      ],
    });
  });

  it('adds, updates by id (given fields only) and removes with destroy; unnamed items are kept', () => {
    const next = composeFields(base, { items: [{ id: 1, quantity: '3' }, { id: 2, destroy: true }, { name: 'C', unit_price: '1' }] });
    expect(next.items.map((i) => [i.id, i.name, i.quantity, i.unit_price, i.net_amount])).toEqual([
      [1, 'A', '3', '10.005', '30.02'],
      [3, 'C', '1', '1.00', '1.00'],
    ]);
    expect(next.next_item_id).toBe(4);
    expect(next.totals.total).toBe('37.32'); // 30.02 + 6.30 VAT + 1.00
  });

  it('ids are never reused after a removal', () => {
    const removed = composeFields(base, { items: [{ id: 2, destroy: true }] });
    expect(composeFields(removed, { items: [{ name: 'D', unit_price: '5' }] }).items.map((i) => i.id)).toEqual([1, 3]);
  });

  it('removing the last item clears the totals; untouched empty items keep them', () => {
    const emptied = composeFields(base, { items: [{ id: 1, destroy: true }, { id: 2, destroy: true }] });
    expect(emptied.totals).toEqual({ subtotal: null, vat_total: null, total: null, vat_breakdown: [] });
    const extracted = { ...emptied, totals: { subtotal: '10.00', vat_total: '2.10', total: '12.10', vat_breakdown: [] } };
    expect(composeFields(extracted, { note: 'x' }).totals.total).toBe('12.10');
  });

  it('a currency change re-prices the items in its minor unit', () => {
    const yen = composeFields(base, { currency: 'JPY' });
    expect(yen.items.map((i) => i.net_amount)).toEqual(['20', '100']);
    expect(yen.totals.total).toBe('136');
  });

  it.each([
    [{ items: [{ id: 9, quantity: '1' }] }, 'unknown_expense_item', 'expense.expense_items_attributes[0].id'],
    [{ items: [{ id: 1, quantity: '2' }, { id: 1, destroy: true }] }, 'duplicate_expense_item', 'expense.expense_items_attributes[1].id'],
    [{ items: [{ destroy: true }] }, 'missing_field', 'expense.expense_items_attributes[0].id'],
    [{ items: [{ name: 'X' }] }, 'missing_field', 'expense.expense_items_attributes[0].unit_price'],
    [{ items: [{ name: 'X', unit_price: '1.1234567' }] }, 'too_many_decimals', 'expense.expense_items_attributes[0].unit_price'],
    [{ items: [{ name: 'X', unit_price: '1', quantity: '0' }] }, 'out_of_range', 'expense.expense_items_attributes[0].quantity'],
    [{ currency: null }, 'missing_field', 'expense.currency'],
    [{ issue_date: '2024-02-30' }, 'invalid_date', 'expense.issue_date'],
    [{ currency: 'XYZ' }, 'invalid_currency', 'expense.currency'],
  ])('422 %j → %s on %s', (input, code, field) => {
    let error: unknown;
    try {
      composeFields(base, input);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(DomainError);
    expect([(error as DomainError).code, (error as DomainError).field]).toEqual([code, field]);
  });

  it('a new expense with items needs a currency', () => {
    expect(() => composeFields(null, { items: [{ name: 'X', unit_price: '1' }] })).toThrow(/currency/);
  });
});

describe('the workspace currency: an expense with items and no currency takes it, as documents do', () => {
  it('create with items and no currency: priced in the workspace currency', async () => {
    const created = await service().expenses.create(tenant, { items: [{ name: 'Paper', unit_price: '10', vat_rate: '21' }] }, undefined);
    expect(created.currency).toBe('CZK');
    expect(created.totals.total).toBe('12.10');
  });

  it('a named currency wins; an explicit null with items stays 422 missing_field; no items, no currency', async () => {
    const s = service();
    expect((await s.expenses.create(tenant, { currency: 'EUR', items: [{ name: 'x', unit_price: '1' }] }, undefined)).currency).toBe('EUR');
    await expect(s.expenses.create(tenant, { currency: null, items: [{ name: 'x', unit_price: '1' }] }, undefined)).rejects.toMatchObject({ code: 'missing_field' });
    expect((await s.expenses.create(tenant, { note: 'typed in' }, undefined)).currency).toBeNull();
  });

  it('PATCH adding items to an expense without a currency: the workspace currency', async () => {
    const s = service();
    const created = await s.expenses.create(tenant, { note: 'x' }, undefined);
    expect((await s.expenses.update(tenant, created.id, { items: [{ name: 'x', unit_price: '1' }] }, undefined)).currency).toBe('CZK');
  });
});

describe('create under an Idempotency-Key with an inline supplier', () => {
  const token = (fingerprint = 'fp'): IdempotencyToken => ({ key: randomBytes(12).toString('base64url'), fingerprint });
  const inline: InlineSupplier = { contact_name: 'Supplier', invoice_account: { name: 'Supplier a.s.' } };

  it('a retry answers the first expense and creates no second contact', async () => {
    const s = service();
    const under = token();
    const first = await s.expenses.create(tenant, { note: 'x' }, inline, under);
    const retry = await s.expenses.create(tenant, { note: 'x' }, inline, under);
    expect(retry.id).toBe(first.id);
    expect(s.suppliers.contacts.size).toBe(1);
    expect(first.supplier_id).toBe([...s.suppliers.contacts.keys()][0]);
  });

  it('a crash after the contact was created and before the expense: the retry links that same contact', async () => {
    const s = service();
    const under = token();
    const insert = s.store.expenses.insert.bind(s.store.expenses);
    s.store.expenses.insert = async () => {
      throw new Error('crash');
    };
    await expect(s.expenses.create(tenant, {}, inline, under)).rejects.toThrow('crash');
    s.store.expenses.insert = insert;
    const retried = await s.expenses.create(tenant, {}, inline, under);
    expect(s.suppliers.contacts.size).toBe(1);
    expect(retried.supplier_id).toBe([...s.suppliers.contacts.keys()][0]);
  });

  it('the same key with another body is a conflict', async () => {
    const s = service();
    const under = token('one');
    await s.expenses.create(tenant, {}, undefined, under);
    expect(await codeOf(s.expenses.create(tenant, {}, undefined, { key: under.key, fingerprint: 'two' }))).toBe('idempotency_key_conflict');
  });

  it('a supplier_id that is no contact of the workspace is 422 invalid_supplier; both forms at once 422 ambiguous_supplier; nothing written', async () => {
    const s = service();
    expect(await codeOf(s.expenses.create(tenant, { supplier_id: 12345 }, undefined))).toBe('invalid_supplier');
    const contact = await s.suppliers.create(tenant, inline);
    expect(await codeOf(s.expenses.create(tenant, { supplier_id: contact.id }, inline))).toBe('ambiguous_supplier');
    expect(s.suppliers.contacts.size).toBe(1);
    expect(await s.store.expenses.count({})).toBe(0);
  });

  it('a body the expense refuses creates no contact', async () => {
    const s = service();
    expect(await codeOf(s.expenses.create(tenant, { issue_date: 'yesterday' }, inline))).toBe('invalid_date');
    expect(s.suppliers.contacts.size).toBe(0);
  });
});

describe('PATCH under interleaving: the rule holds for the version actually written', () => {
  /** Holds the first update of the collection until `release()`; later updates pass. */
  function latchFirstUpdate(store: ReturnType<typeof service>['store']) {
    const update = store.expenses.update.bind(store.expenses);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const arrived = new Promise<void>((resolve) => (reached = resolve));
    let first = true;
    store.expenses.update = async (doc) => {
      if (first) {
        first = false;
        reached();
        await gate;
      }
      return update(doc);
    };
    return { arrived, release };
  }

  it('two PATCHes adding items at once: both items are kept, with distinct ids, and the totals count both', async () => {
    const s = service();
    const created = await s.expenses.create(tenant, { currency: 'EUR', items: [{ name: 'A', unit_price: '1' }] }, undefined);
    const latch = latchFirstUpdate(s.store);
    const slow = s.expenses.update(tenant, created.id, { items: [{ name: 'B', unit_price: '10' }] }, undefined);
    await latch.arrived; // the slow PATCH read version 1 and is about to write
    const fast = await s.expenses.update(tenant, created.id, { items: [{ name: 'C', unit_price: '100' }] }, undefined);
    latch.release();
    const written = await slow; // its write loses the compare-and-set and is re-applied on the fast one's version
    expect(fast.items.map((i) => i.name)).toEqual(['A', 'C']);
    expect(written.items.map((i) => [i.id, i.name])).toEqual([[1, 'A'], [2, 'C'], [3, 'B']]);
    expect(written.totals.total).toBe('111.00');
  });

  it('a PATCH racing a DELETE: the delete wins, the PATCH is 404 and writes nothing', async () => {
    const s = service();
    const created = await s.expenses.create(tenant, { note: 'before' }, undefined);
    const latch = latchFirstUpdate(s.store);
    const patch = codeOf(s.expenses.update(tenant, created.id, { note: 'after' }, undefined));
    await latch.arrived;
    await s.expenses.delete(tenant, created.id);
    latch.release();
    expect(await patch).toBe('resource_not_found');
    const stored = await s.store.expenses.get(created.id);
    expect([stored?.note, stored?.deleted !== null]).toEqual(['before', true]);
  });

  it('a PATCH updating an item another PATCH removed meanwhile: 422 unknown_expense_item, nothing written', async () => {
    const s = service();
    const created = await s.expenses.create(tenant, { currency: 'EUR', items: [{ name: 'A', unit_price: '1' }, { name: 'B', unit_price: '2' }] }, undefined);
    const latch = latchFirstUpdate(s.store);
    const patch = codeOf(s.expenses.update(tenant, created.id, { items: [{ id: 2, quantity: '5' }] }, undefined));
    await latch.arrived;
    await s.expenses.update(tenant, created.id, { items: [{ id: 2, destroy: true }] }, undefined);
    latch.release();
    expect(await patch).toBe('unknown_expense_item');
    expect((await s.store.expenses.get(created.id))?.items.map((i) => i.name)).toEqual(['A']);
  });
});
