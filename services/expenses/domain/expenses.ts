// Expense CRUD (spec §4): list, create, read, partial update and soft delete. The supplier is a contact
// of the workspace: linked by supplier_id, or created (and on update changed) inline through the
// contacts service.
import { withExpenseEvent } from './events';
import { fail } from '../../shared/errors';
import { createdUnder, createOnce, derivedToken, IdempotencyToken } from '../../shared/idempotency';
import { ResolvedPage } from '../../shared/pagination';
import { mutate } from '../../shared/store/port';
import { ownedBy, Tenant, tenantWhere } from '../../shared/tenant';
import { ExpenseRecord, ExpensesStore } from '../ports/expenses-store';
import { Clock, InlineSupplier, SupplierContact, Suppliers } from '../ports/suppliers';
import { WorkspaceSettings } from '../ports/workspace-settings';
import { ComposedFields, composeFields, ExpenseInput, needsWorkspaceCurrency } from './fields';
import { newExpense, withDerived } from './new-expense';
import { ListFilters, mergeInOrder } from './listing';

export type ExpenseView = ExpenseRecord;

const SUPPLIER_FIELD = 'expense.supplier_id';

/** The idempotency token of the contact an expense creates inline: derived from the expense's, so a
 * retry of the expense's create answers the same contact instead of creating a second one. */
const supplierToken = (token: IdempotencyToken | undefined): IdempotencyToken | undefined =>
  token && derivedToken(token.key, 'expense-supplier', token.fingerprint);

/** The key of the contact a PATCH creates for an expense without one: the expense and the revision at
 * which the creation was recorded on it (supplier_pending_key). */
const pendingSupplierKey = (expenseId: number, version: number) => `expense-${expenseId}-v${version}-supplier`;

/** Test-only latches between the steps of an update (crash and interleaving tests). */
export interface ExpensesHooks {
  /** After the contacts service created (or answered) the inline supplier, before the expense links it. */
  afterSupplierCreated?(expenseId: number, contactId: number): Promise<void>;
  /** After a write that carries an event: wakes the outbox relay. */
  written?(): void;
}

export class Expenses {
  constructor(
    private readonly store: ExpensesStore,
    private readonly suppliers: Suppliers,
    private readonly workspace: WorkspaceSettings,
    private readonly clock: Clock,
    private readonly hooks: ExpensesHooks = {},
  ) {}

  /** The workspace currency when `input` over `current` needs it (items, no currency named), else undefined. */
  private async workspaceCurrency(tenant: Tenant, current: ComposedFields | null, input: ExpenseInput): Promise<string | undefined> {
    return needsWorkspaceCurrency(current, input) ? this.workspace.currency(tenant) : undefined;
  }

  private now = () => this.clock.now().toISOString();

  /** `page.limit + 1` rows after the page's keyset, in list order (the caller cuts the page). */
  async list(tenant: Tenant, filters: ListFilters, page: ResolvedPage): Promise<ExpenseView[]> {
    const read = (status?: string) =>
      this.store.expenses.list({
        where: { ...tenantWhere(tenant), deleted: null, ...(status ? { extraction_status: status } : {}) },
        orderBy: ['sort_date'],
        after: page.after,
        limit: page.limit + 1,
        contains: filters.search ? { field: 'search_text', text: filters.search } : undefined,
      });
    if (filters.statuses.length === 0) return read();
    // The store filters by equality: one read per status, merged in list order.
    return mergeInOrder(await Promise.all(filters.statuses.map((s) => read(s))), page.limit + 1);
  }

  async get(tenant: Tenant, id: number): Promise<ExpenseView> {
    return this.load(tenant, id);
  }

  /** Under an Idempotency-Key, a retry answers the expense (and reuses the contact) the first attempt created. */
  async create(tenant: Tenant, input: ExpenseInput, inline: InlineSupplier | undefined, token?: IdempotencyToken): Promise<ExpenseView> {
    return createOnce(this.store.expenses, tenant, token, async () => {
      // Everything the body can get wrong is checked before the contacts service writes anything.
      const fields = composeFields(null, input, await this.workspaceCurrency(tenant, null, input));
      if (inline && input.supplier_id) {
        throw fail.invalid('ambiguous_supplier', 'send either expense.supplier_id or the inline supplier (address, unit, invoice_account), not both', SUPPLIER_FIELD);
      }
      const supplier = inline ? await this.suppliers.create(tenant, inline, supplierToken(token)) : await this.linkable(tenant, input.supplier_id);
      const id = await this.store.nextId('expenses.expense');
      const record = newExpense({ id, account_id: tenant.account_id, livemode: tenant.livemode }, this.now(), {
        supplier_id: supplier?.id ?? null,
        supplier_contact_name: supplier?.name ?? null,
        ...fields,
        ...createdUnder(token),
      });
      return this.store.expenses.insert(withExpenseEvent(record, 'created', record.created_at));
    }).finally(() => this.hooks.written?.());
  }

  async update(tenant: Tenant, id: number, input: ExpenseInput, inline: InlineSupplier | undefined): Promise<ExpenseView> {
    const current = await this.load(tenant, id);
    const workspaceCurrency = await this.workspaceCurrency(tenant, current, input);
    composeFields(current, input, workspaceCurrency); // 422 before the contacts service writes anything
    if (inline && input.supplier_id) {
      throw fail.invalid('ambiguous_supplier', 'send either expense.supplier_id or the inline supplier (address, unit, invoice_account), not both', SUPPLIER_FIELD);
    }
    let supplier: SupplierContact | null | undefined;
    let createdUnderPending: number | undefined;
    if (inline) {
      // The inline objects change the linked supplier; an expense without one gets a new contact.
      if (current.supplier_id) {
        supplier = await this.suppliers.update(tenant, current.supplier_id, inline);
        if (!supplier) throw fail.invalid('invalid_supplier', `${SUPPLIER_FIELD}: the linked contact no longer exists; link another one`, SUPPLIER_FIELD);
      } else {
        supplier = await this.createSupplierOf(tenant, id, inline);
        createdUnderPending = supplier.id;
      }
      await this.hooks.afterSupplierCreated?.(id, supplier.id);
    } else if (input.supplier_id !== undefined) {
      supplier = await this.linkable(tenant, input.supplier_id);
    }
    const written = await mutate(this.store.expenses, id, (doc) => {
      if (!ownedBy(doc, tenant) || doc.deleted !== null) throw fail.notFound('expense');
      const next: ExpenseRecord = { ...doc, ...composeFields(doc, input, workspaceCurrency) };
      if (supplier !== undefined) {
        next.supplier_id = supplier?.id ?? null;
        next.supplier_contact_name = supplier?.name ?? null;
        // The contact created under the pending key is linked: the next inline supplier is a new one.
        if (supplier && supplier.id === createdUnderPending) next.supplier_pending_key = null;
      }
      const derived = withDerived(next);
      if (JSON.stringify(derived) === JSON.stringify(doc)) return null;
      const at = this.now();
      return withExpenseEvent({ ...derived, updated_at: at }, 'updated', at);
    });
    this.hooks.written?.();
    if (!written) throw fail.notFound('expense');
    return written;
  }

  /**
   * The contact a PATCH creates for an expense without one, at most once per expense: the key is
   * recorded on the expense (supplier_pending_key) before the contacts service is called and cleared
   * by the write that links the contact, so a retry after a crash between the two — or a concurrent
   * PATCH, or one after other writes changed the revision — creates under the same key and gets the
   * same contact. A request that finds the key already recorded applies its own body to that contact.
   */
  private async createSupplierOf(tenant: Tenant, id: number, inline: InlineSupplier): Promise<SupplierContact> {
    for (let attempt = 0; attempt < 3; attempt++) {
      let key = '';
      let adopted = false;
      const marked = await mutate(this.store.expenses, id, (doc) => {
        if (!ownedBy(doc, tenant) || doc.deleted !== null) throw fail.notFound('expense');
        adopted = Boolean(doc.supplier_pending_key);
        key = doc.supplier_pending_key || pendingSupplierKey(id, doc.version);
        return adopted ? null : { ...doc, supplier_pending_key: key };
      });
      if (!marked) throw fail.notFound('expense');
      const contact = await this.suppliers.create(tenant, inline, derivedToken(key, 'contact'));
      if (!adopted) return contact;
      // An earlier attempt's contact: it gets this body; gone meanwhile (deleted) → a new key.
      const updated = await this.suppliers.update(tenant, contact.id, inline);
      if (updated) return updated;
      await mutate(this.store.expenses, id, (doc) => (doc.supplier_pending_key === key ? { ...doc, supplier_pending_key: null } : null));
    }
    throw fail.conflict('supplier_changed', 'the expense’s supplier changed while it was being written; retry');
  }

  async delete(tenant: Tenant, id: number): Promise<void> {
    const written = await mutate(this.store.expenses, id, (doc) => {
      if (!ownedBy(doc, tenant) || doc.deleted !== null) throw fail.notFound('expense');
      const at = this.now();
      return withExpenseEvent({ ...doc, deleted: at, updated_at: at }, 'deleted', at);
    });
    this.hooks.written?.();
    if (!written) throw fail.notFound('expense');
  }

  /** A live expense of the tenant (a deleted one is 404, as for documents). */
  private async load(tenant: Tenant, id: number): Promise<ExpenseRecord> {
    const doc = await this.store.expenses.get(id);
    if (!doc || !ownedBy(doc, tenant) || doc.deleted !== null) throw fail.notFound('expense');
    return doc;
  }

  /** null (no supplier) for null/0; else a live contact of the workspace, or 422 invalid_supplier. */
  private async linkable(tenant: Tenant, supplierId: number | null | undefined): Promise<SupplierContact | null> {
    if (!supplierId) return null;
    const contact = await this.suppliers.find(tenant, supplierId);
    if (!contact) throw fail.invalid('invalid_supplier', `${SUPPLIER_FIELD}: no contact ${supplierId} in this workspace`, SUPPLIER_FIELD);
    return contact;
  }
}
