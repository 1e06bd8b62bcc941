// The distributed mode's transport, on one machine: grpc-js over loopback under mTLS, each caller with its
// own certificate (test CA made with openssl), as the services run in a cluster.
import { ExpensesServiceService } from '../../gen/invoicing/expenses/v1/expenses';
import { loadMeshTls } from '../../services/shared/grpc/mesh';
import { RunningServer, startGrpcServer } from '../../services/shared/grpc/server';
import { connect } from '../../services/shared/grpc/typed';
import { createLogger } from '../../services/shared/logger';
import { createTestCa } from '../support/certs';
import { describeGrpcTransportContract, ExpensesClient } from './grpc-transport.contract';

describeGrpcTransportContract('grpc-js over loopback, mTLS (distributed)', () => {
  const ca = createTestCa();
  let server: RunningServer | undefined;
  return {
    serve: async (binding) => {
      server = await startGrpcServer({ bindings: [binding], log: createLogger('contract'), tls: loadMeshTls(ca.dir('expenses')) });
    },
    client: (caller) => connect(ExpensesServiceService, 'invoicing.expenses.v1.ExpensesService', server!.address, loadMeshTls(ca.dir(caller))) as ExpensesClient,
    stop: async () => server?.shutdown(),
  };
});
