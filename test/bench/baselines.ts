// Baseline servers of the benchmark, each its own process (pinned to core 0 by run.ts):
//   bare  <json-file>  a bare node:http server answering the same JSON as the measured GET
//   naive <json-file>  the naive chain: a bare express handler making one unary grpc-js call to a
//                      server (in the same process, as in embedded mode) that returns a constant;
//                      it answers the presented account, the same JSON shape as the measured GET
// Both print {"ready": …, "port": n} when listening and stop on SIGTERM.
import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { Account, GetUserAccountResponse, IdentityServiceService } from '../../gen/invoicing/identity/v1/identity';
import { presentAccount } from '../../gateway/routes/presenters';

function ready(kind: string, server: http.Server): void {
  const address = server.address();
  process.stdout.write(JSON.stringify({ ready: kind, port: typeof address === 'object' && address ? address.port : 0 }) + '\n');
  process.on('SIGTERM', () => process.exit(0));
}

function bare(json: Buffer): void {
  const server = http.createServer({ keepAliveTimeout: 65_000 }, (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': json.length });
    res.end(json);
  });
  server.listen(0, '127.0.0.1', () => ready('bare', server));
}

async function naive(json: Buffer): Promise<void> {
  const constant: GetUserAccountResponse = { account: Account.fromJSON(JSON.parse(json.toString())) };
  const grpcServer = new grpc.Server();
  grpcServer.addService(IdentityServiceService, {
    getUserAccount: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<GetUserAccountResponse>) => callback(null, constant),
  } as unknown as grpc.UntypedServiceImplementation);
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
  const Client = grpc.makeGenericClientConstructor(IdentityServiceService, 'invoicing.identity.v1.IdentityService');
  const client = new Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure()) as unknown as {
    getUserAccount(req: unknown, cb: (err: grpc.ServiceError | null, res: GetUserAccountResponse) => void): void;
  };
  const app = express();
  app.get('/api/v1/user/accounts/:account_id', (req, res) => {
    client.getUserAccount({ user_id: 1, account_id: Number(req.params.account_id) }, (err, reply) => {
      if (err) res.status(500).json({ error: err.message });
      else res.json(presentAccount(reply.account!));
    });
  });
  const server = http.createServer({ keepAliveTimeout: 65_000 }, app);
  server.listen(0, '127.0.0.1', () => ready('naive', server));
}

const [kind, jsonFile] = process.argv.slice(2);
const json = readFileSync(jsonFile);
if (kind === 'bare') bare(json);
else if (kind === 'naive') void naive(json);
else {
  process.stderr.write('usage: baselines.js bare|naive <json-file>\n');
  process.exit(2);
}
