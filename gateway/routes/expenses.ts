// /accounts/:account_id/expenses — spec §4 Expenses: list, create, read, update, soft delete.
// Upload, the file download and retry_extraction live with the extraction job machinery.
import { LegalEntityInput } from '../../gen/invoicing/contacts/v1/contacts';
import { ExpenseInput, ExpenseItemInput, ExtractionStatus, SupplierInput } from '../../gen/invoicing/expenses/v1/expenses';
import { HttpError } from '../http/errors';
import { listEnvelope, pageQuery, pathId } from '../http/ids';
import { EXTRACTION_STATUS_NAMES, presentExpense } from './expense-presenters';
import { RouteSpec } from './route';

const BASE = '/accounts/:account_id/expenses';

type Body = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Decimals: strings verbatim, JSON numbers by their shortest round-trip form (parsed exactly by the service). */
const decimal = (value: unknown): string | undefined => (value === undefined || value === null ? undefined : String(value));
/** JSON null clears an optional field; the RPC spells "clear" as an empty string (id 0). */
const clearable = (value: unknown): string | undefined => (value === null ? '' : (value as string | undefined));

const FILE_FIELDS = ['file', 'attachment'];

/** A file named in a JSON body (spec §4: files are not accepted here). */
function refuseFiles(body: Body): void {
  for (const [where, object] of [['', body], ['expense.', body.expense ?? {}]] as const) {
    const field = FILE_FIELDS.find((f) => (object as Body)[f] !== undefined);
    if (field) throw new HttpError(422, 'file_not_accepted', 'files are not accepted on this endpoint; upload them with POST …/expenses/upload', { field: where + field });
  }
}

function itemInput(item: Body): ExpenseItemInput {
  return {
    id: item.id ?? 0,
    name: item.name,
    quantity: decimal(item.quantity),
    unit_price: decimal(item.unit_price),
    vat_rate: decimal(item.vat_rate),
    destroy: item._destroy === true,
  };
}

function expenseInput(body: Body): ExpenseInput {
  const e: Body = body.expense ?? {};
  return {
    issue_date: clearable(e.issue_date),
    due_date: clearable(e.due_date),
    supplier_id: e.supplier_id === null ? 0 : e.supplier_id,
    document_number: clearable(e.document_number),
    variable_symbol: clearable(e.variable_symbol),
    note: clearable(e.note),
    currency: clearable(e.currency),
    expense_items_attributes: Array.isArray(e.expense_items_attributes) ? e.expense_items_attributes.map(itemInput) : [],
  };
}

/** The inline supplier: `unit` (the contact), `invoice_account` (its legal entity), `address` (the entity's). */
function supplierInput(body: Body): SupplierInput | undefined {
  if (body.unit === undefined && body.invoice_account === undefined && body.address === undefined) return undefined;
  return {
    contact_name: body.unit?.name,
    // fromPartial: the encoder would write "undefined" for a missing non-optional string.
    invoice_account: LegalEntityInput.fromPartial({ ...(body.invoice_account ?? {}), ...(body.address !== undefined ? { address: body.address } : {}) }),
  };
}

/** `extraction_status`: one value or a comma list, repeatable; unknown values are dropped (spec §4). */
function statusFilter(raw: unknown): ExtractionStatus[] {
  if (raw === undefined) return [];
  const values = (Array.isArray(raw) ? raw : [raw]).flatMap((v) => (typeof v === 'string' ? v.split(',') : []));
  if (values.length === 0) throw new HttpError(422, 'invalid_type', 'extraction_status must be a string', { field: 'extraction_status' });
  return values.map((v) => EXTRACTION_STATUS_NAMES[v.trim().toLowerCase()]).filter((s): s is ExtractionStatus => s !== undefined);
}

const expenseId = (raw: string | undefined) => pathId(raw, 'expense');

/** A supplier_id copies the contact's name (for search); the inline supplier creates or changes a contact. */
const crossResource: Pick<RouteSpec, 'reads' | 'writes'> = {
  reads: { 'expense.supplier_id': 'contacts' },
  writes: { unit: 'contacts', invoice_account: 'contacts', address: 'contacts' },
};

export const expenseRoutes: RouteSpec[] = [
  {
    method: 'get',
    path: BASE,
    operationId: 'listExpenses',
    scope: ['read', 'expenses'],
    handle: async (ctx, { expenses }) => {
      const search = ctx.query.search;
      if (search !== undefined && typeof search !== 'string') throw new HttpError(422, 'invalid_type', 'search must be a string', { field: 'search' });
      const res = await expenses.listExpenses(
        { tenant: ctx.tenant, page: pageQuery(ctx.query), search: search ?? '', extraction_status: statusFilter(ctx.query.extraction_status) },
        { requestId: ctx.requestId },
      );
      return { status: 200, body: listEnvelope(res.expenses.map(presentExpense), res.page_info) };
    },
  },
  {
    method: 'post',
    path: BASE,
    operationId: 'createExpense',
    scope: ['write', 'expenses'],
    ...crossResource,
    refusesFiles: true,
    handle: async (ctx, { expenses }) => {
      const body = ctx.body as Body;
      refuseFiles(body);
      const res = await expenses.createExpense({ tenant: ctx.tenant, expense: expenseInput(body), supplier: supplierInput(body) }, { requestId: ctx.requestId });
      return { status: 201, body: presentExpense(res.expense!) };
    },
  },
  {
    method: 'get',
    path: `${BASE}/:id`,
    operationId: 'getExpense',
    scope: ['read', 'expenses'],
    handle: async (ctx, { expenses }) => {
      const res = await expenses.getExpense({ tenant: ctx.tenant, id: expenseId(ctx.params.id) }, { requestId: ctx.requestId });
      return { status: 200, body: presentExpense(res.expense!) };
    },
  },
  {
    method: 'patch',
    path: `${BASE}/:id`,
    operationId: 'updateExpense',
    scope: ['write', 'expenses'],
    ...crossResource,
    refusesFiles: true,
    handle: async (ctx, { expenses }) => {
      const body = ctx.body as Body;
      refuseFiles(body);
      const res = await expenses.updateExpense(
        { tenant: ctx.tenant, id: expenseId(ctx.params.id), expense: expenseInput(body), supplier: supplierInput(body) },
        { requestId: ctx.requestId },
      );
      return { status: 200, body: presentExpense(res.expense!) };
    },
  },
  {
    method: 'delete',
    path: `${BASE}/:id`,
    operationId: 'deleteExpense',
    scope: ['write', 'expenses'],
    handle: async (ctx, { expenses }) => {
      await expenses.deleteExpense({ tenant: ctx.tenant, id: expenseId(ctx.params.id) }, { requestId: ctx.requestId });
      return { status: 204 };
    },
  },
];
