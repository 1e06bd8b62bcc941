// Baseline servers of the benchmark, each its own process (pinned to core 0 by run.ts):
//   bare  <json-file>  a bare node:http server answering the same JSON as the measured GET
//   naive <pb-file>    the naive chain: a bare express handler making one unary grpc-js call to a
//                      server (in the same process, as in embedded mode) that returns a constant —
//                      the measured GET's own GetContactResponse, captured by run.ts — and answering
//                      it presented, i.e. the same JSON as the measured GET
// Both print {"ready": …, "port": n} when listening and stop on SIGTERM.
import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { ContactsServiceService, GetContactResponse } from '../../gen/invoicing/contacts/v1/contacts';
import { presentContact } from '../../gateway/routes/contacts';

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

async function naive(encoded: Buffer): Promise<void> {
  const constant = GetContactResponse.decode(encoded);
  const grpcServer = new grpc.Server();
  grpcServer.addService(ContactsServiceService, {
    getContact: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<GetContactResponse>) => callback(null, constant),
  } as unknown as grpc.UntypedServiceImplementation);
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
  const Client = grpc.makeGenericClientConstructor(ContactsServiceService, 'invoicing.contacts.v1.ContactsService');
  const client = new Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure()) as unknown as {
    getContact(req: unknown, cb: (err: grpc.ServiceError | null, res: GetContactResponse) => void): void;
  };
  const app = express();
  app.get('/api/v1/accounts/:account_id/contacts/:id', (req, res) => {
    const request = { tenant: { account_id: Number(req.params.account_id), livemode: true }, id: Number(req.params.id) };
    client.getContact(request, (err, reply) => {
      if (err) res.status(500).json({ error: err.message });
      else res.json(presentContact(reply.contact!));
    });
  });
  const server = http.createServer({ keepAliveTimeout: 65_000 }, app);
  server.listen(0, '127.0.0.1', () => ready('naive', server));
}

const [kind, file] = process.argv.slice(2);
if (kind === 'bare') bare(readFileSync(file));
else if (kind === 'naive') void naive(readFileSync(file));
else {
  process.stderr.write('usage: baselines.js bare <json-file> | naive <GetContactResponse-file>\n');
  process.exit(2);
}
