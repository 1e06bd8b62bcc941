// The embedded mode's transport: calls run the handlers in this process (services/shared/grpc/in-process.ts).
import * as grpc from '@grpc/grpc-js';
import { ExpensesServiceService } from '../../gen/invoicing/expenses/v1/expenses';
import { IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { inProcessAddress, serveInProcess } from '../../services/shared/grpc/in-process';
import { AsyncHandlers, connect, implement, restrict } from '../../services/shared/grpc/typed';
import { createLogger } from '../../services/shared/logger';
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

describe('in-process transport: what only it decides', () => {
  const log = createLogger('contract');
  const binding = implement('invoicing.identity.v1.IdentityService', IdentityServiceService, {} as AsyncHandlers<typeof IdentityServiceService>, log);

  it('a module nobody serves answers UNAVAILABLE, as an address where nothing listens', async () => {
    const client = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', inProcessAddress('nobody-here', 'gateway'));
    await expect(client.getUser({ user_id: 1 })).rejects.toMatchObject({ status: grpc.status.UNAVAILABLE });
  });

  it('admin bindings are never served in-process (they stay on their socket, for the CLI): UNIMPLEMENTED', async () => {
    const unserve = serveInProcess('identity-admin-test', [restrict(binding, { callers: ['gateway'], admin: true })]);
    try {
      const client = connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', inProcessAddress('identity-admin-test', 'gateway'));
      await expect(client.getUser({ user_id: 1 })).rejects.toMatchObject({ status: grpc.status.UNIMPLEMENTED });
    } finally {
      unserve();
    }
  });

  it('a binding that names no callers is refused, as under mTLS', () => {
    expect(() => serveInProcess('no-callers-test', [binding])).toThrow(/names no callers/);
  });

  it('an address without a caller identity is refused at connect', () => {
    expect(() => connect(IdentityServiceService, 'invoicing.identity.v1.IdentityService', 'in-process:identity')).toThrow(/in-process:<target>\?caller=<identity>/);
  });
});
