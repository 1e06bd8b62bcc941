// Baseline servers of the benchmark, each its own process (pinned to core 0 by run.ts):
//   bare  <json-file>  a bare node:http server answering the same JSON as the measured GET
//   naive <pb-file>    the naive chain: a bare express handler making one unary grpc-js call to a
//                      server (in the same process, as in embedded mode) that returns a constant —
//                      the measured GET's own GetContactResponse, captured by run.ts — and answering
//                      it presented, i.e. the same JSON as the measured GET
//   chain-service <pb-file>
//                      one service process of the naive distributed chain (test/bench/distributed.ts): a
//                      grpc-js server whose ContactsService.GetContact returns the constant
//   chain-gateway <pb-file> <address>
//                      the naive chain's gateway process: node:http, one unary grpc-js call per request to
//                      the chain-service at <address>, the reply presented (the same JSON as the GET)
// All print {"ready": …, "port": n} when listening and stop on SIGTERM.
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

/** A grpc-js server (default options) whose GetContact returns `constant`; resolves with its port. */
function constantContactServer(constant: GetContactResponse): Promise<number> {
  const grpcServer = new grpc.Server();
  grpcServer.addService(ContactsServiceService, {
    getContact: (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<GetContactResponse>) => callback(null, constant),
  } as unknown as grpc.UntypedServiceImplementation);
  return new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
}

type ContactClient = { getContact(req: unknown, cb: (err: grpc.ServiceError | null, res: GetContactResponse) => void): void };

function contactClient(address: string): ContactClient {
  const Client = grpc.makeGenericClientConstructor(ContactsServiceService, 'invoicing.contacts.v1.ContactsService');
  return new Client(address, grpc.credentials.createInsecure()) as unknown as ContactClient;
}

async function naive(encoded: Buffer): Promise<void> {
  const grpcPort = await constantContactServer(GetContactResponse.decode(encoded));
  const client = contactClient(`127.0.0.1:${grpcPort}`);
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

async function chainService(encoded: Buffer): Promise<void> {
  const port = await constantContactServer(GetContactResponse.decode(encoded));
  process.stdout.write(JSON.stringify({ ready: 'chain-service', port }) + '\n');
  process.on('SIGTERM', () => process.exit(0));
}

/** The GET's route read by hand (no router: the cheapest a gateway can be), one hop, the reply presented. */
function chainGateway(address: string): void {
  const client = contactClient(address);
  const route = /^\/api\/v1\/accounts\/(\d+)\/contacts\/(\d+)$/;
  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const match = route.exec(req.url ?? '');
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const request = { tenant: { account_id: Number(match[1]), livemode: true }, id: Number(match[2]) };
    client.getContact(request, (err, reply) => {
      const body = Buffer.from(JSON.stringify(err ? { error: err.message } : presentContact(reply.contact!)));
      res.writeHead(err ? 500 : 200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => ready('chain-gateway', server));
}

const [kind, file, address] = process.argv.slice(2);
if (kind === 'bare') bare(readFileSync(file));
else if (kind === 'naive') void naive(readFileSync(file));
else if (kind === 'chain-service') void chainService(readFileSync(file));
else if (kind === 'chain-gateway') chainGateway(address);
else {
  process.stderr.write('usage: baselines.js bare <json-file> | naive <GetContactResponse-file> | chain-service <GetContactResponse-file> | chain-gateway - <address>\n');
  process.exit(2);
}
