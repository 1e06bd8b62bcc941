// The naive chain of the PDF benchmark, its own process: a bare express handler making one unary
// grpc-js call to a server (in the same process, as in embedded mode) that returns a constant
// RenderDocumentPdfResponse — the measured PDF, captured by pdf.ts — and answering it: the PDF with its
// headers, or 304 when the request carries If-None-Match (the constant then says not_modified).
// Prints {"ready": …, "port": n} when listening; stops on SIGTERM.
import * as grpc from '@grpc/grpc-js';
import express from 'express';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { RenderDocumentPdfResponse, RenderingServiceService } from '../../gen/invoicing/rendering/v1/rendering';

async function main(file: string): Promise<void> {
  const pdf = RenderDocumentPdfResponse.decode(readFileSync(file));
  const notModified: RenderDocumentPdfResponse = { ...pdf, pdf: Buffer.alloc(0), not_modified: true };
  const grpcServer = new grpc.Server();
  grpcServer.addService(RenderingServiceService, {
    renderDocumentPdf: (call: grpc.ServerUnaryCall<{ if_none_match: string }, unknown>, callback: grpc.sendUnaryData<RenderDocumentPdfResponse>) =>
      callback(null, call.request.if_none_match ? notModified : pdf),
  } as unknown as grpc.UntypedServiceImplementation);
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
  const Client = grpc.makeGenericClientConstructor(RenderingServiceService, 'invoicing.rendering.v1.RenderingService');
  const client = new Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure()) as unknown as {
    renderDocumentPdf(req: unknown, cb: (err: grpc.ServiceError | null, res: RenderDocumentPdfResponse) => void): void;
  };
  const app = express();
  app.get('/api/v1/accounts/:account_id/invoices/:id/pdf', (req, res) => {
    const request = { tenant: { account_id: Number(req.params.account_id), livemode: true }, document_type: 1, document_id: Number(req.params.id), if_none_match: req.header('if-none-match') ?? '' };
    client.renderDocumentPdf(request, (err, reply) => {
      if (err) return void res.status(500).json({ error: err.message });
      res.setHeader('ETag', reply.etag);
      if (reply.not_modified) return void res.status(304).end();
      res.setHeader('Content-Type', 'application/pdf');
      res.setHeader('Content-Disposition', `attachment; filename="${reply.filename}"`);
      res.end(Buffer.from(reply.pdf));
    });
  });
  const server = http.createServer({ keepAliveTimeout: 65_000 }, app);
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(JSON.stringify({ ready: 'naive-pdf', port: typeof address === 'object' && address ? address.port : 0 }) + '\n');
    process.on('SIGTERM', () => process.exit(0));
  });
}

void main(process.argv[2]);
