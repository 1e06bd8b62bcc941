// Thin gRPC handlers: decode, call the domain, encode. Errors are DomainErrors thrown by the domain.
import { ExpensesServiceService } from '../../../gen/invoicing/expenses/v1/expenses';
import { fail } from '../../shared/errors';
import { AsyncHandlers } from '../../shared/grpc/typed';
import { CursorCodec } from '../../shared/pagination';
import { requireTenant } from '../../shared/tenant';
import { ExpenseFiles } from '../domain/expense-files';
import { Expenses } from '../domain/expenses';
import { fileHandlers } from './file-handlers';
import { filterKeyOf, keysetOf, MAX_SEARCH_LENGTH, normaliseFilters } from '../domain/listing';
import { fromExpenseInput, fromStatusMessages, fromSupplierInput, toExpenseMessage } from './mapping';

export function expensesHandlers(expenses: Expenses, files: ExpenseFiles, cursors: CursorCodec): AsyncHandlers<typeof ExpensesServiceService> {
  return {
    listExpenses: async (req) => {
      const tenant = requireTenant(req.tenant);
      const filters = normaliseFilters(req.search, fromStatusMessages(req.extraction_status));
      if (filters.search.length > MAX_SEARCH_LENGTH) throw fail.invalid('too_long', `search is longer than ${MAX_SEARCH_LENGTH} characters`, 'search');
      const filterKey = filterKeyOf(tenant, filters);
      const page = cursors.resolve(req.page, filterKey);
      const rows = await expenses.list(tenant, filters, page);
      const { items, page_info } = cursors.page(rows, page.limit, keysetOf, filterKey);
      return { expenses: items.map(toExpenseMessage), page_info };
    },
    createExpense: async (req, ctx) => ({
      expense: toExpenseMessage(await expenses.create(requireTenant(req.tenant), fromExpenseInput(req.expense), fromSupplierInput(req.supplier), ctx.idempotency)),
    }),
    getExpense: async (req) => ({ expense: toExpenseMessage(await expenses.get(requireTenant(req.tenant), req.id)) }),
    updateExpense: async (req) => ({
      expense: toExpenseMessage(await expenses.update(requireTenant(req.tenant), req.id, fromExpenseInput(req.expense), fromSupplierInput(req.supplier))),
    }),
    deleteExpense: async (req) => {
      await expenses.delete(requireTenant(req.tenant), req.id);
      return {};
    },
    ...fileHandlers(files),
  };
}
