// Wires the expenses service: its store, the contacts service as the supplier directory, and its
// handlers to gRPC.
import { ExpensesServiceService } from '../../gen/invoicing/expenses/v1/expenses';
import { implement } from '../shared/grpc/typed';
import { ServiceModule } from '../shared/module';
import { CursorCodec } from '../shared/pagination';
import { expensesStore } from './adapters/expenses-store';
import { GrpcSuppliers } from './adapters/grpc-suppliers';
import { Expenses } from './domain/expenses';
import { expensesHandlers } from './grpc/handlers';

export const expensesModule: ServiceModule = {
  name: 'expenses',
  async create({ adapters, secrets, log, peers }) {
    const store = expensesStore(adapters.store);
    const suppliers = new GrpcSuppliers(peers.contacts);
    const expenses = new Expenses(store, suppliers, { now: () => new Date() });
    const cursors = new CursorCodec(secrets.cursorSecret);
    return {
      bindings: [implement('invoicing.expenses.v1.ExpensesService', ExpensesServiceService, expensesHandlers(expenses, cursors), log)],
      stop: async () => suppliers.close(),
    };
  },
};
