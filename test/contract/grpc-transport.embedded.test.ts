// The embedded mode's transport: calls run the handlers in this process (services/shared/grpc/in-process.ts).
import { ExpensesServiceService } from '../../gen/invoicing/expenses/v1/expenses';
import { inProcessAddress, serveInProcess } from '../../services/shared/grpc/in-process';
import { connect } from '../../services/shared/grpc/typed';
import { describeGrpcTransportContract, ExpensesClient } from './grpc-transport.contract';

describeGrpcTransportContract('in-process (embedded)', () => {
  let unserve = () => undefined as void;
  return {
    serve: async (binding) => {
      unserve = serveInProcess('expenses', [binding]);
    },
    client: (caller) => connect(ExpensesServiceService, 'invoicing.expenses.v1.ExpensesService', inProcessAddress('expenses', caller)) as ExpensesClient,
    stop: async () => unserve(),
  };
});
