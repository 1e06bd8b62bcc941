// The internal RPC transport's contract, run over both transports: grpc-js over loopback under mTLS (the
// distributed mode) and the in-process transport (the embedded mode, services/shared/grpc/in-process.ts).
// The same generated client and `implement()` handlers on both; what a caller observes must be the same.
import * as grpc from '@grpc/grpc-js';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { ExpensesServiceService, GetExpenseFileResponse, GetExpenseRequest, GetExpenseResponse, UploadExpenseRequest, UploadExpenseResponse } from '../../gen/invoicing/expenses/v1/expenses';
import { fail } from '../../services/shared/errors';
import { RemoteCallError } from '../../services/shared/grpc/errors';
import { AsyncClient, AsyncHandlers, CallContext, implement, restrict, ServiceBinding } from '../../services/shared/grpc/typed';
import { createLogger } from '../../services/shared/logger';
import { inSpan, SpanKind, startTracing, stopTracing } from '../../services/shared/observability/tracing';

export type ExpensesClient = AsyncClient<typeof ExpensesServiceService> & { close(): void };

export interface Transport {
  /** Serves the binding (restricted to its callers) and returns a client presenting `caller`'s identity. */
  serve(binding: ServiceBinding): Promise<void>;
  client(caller: string): ExpensesClient;
  stop(): Promise<void>;
}

const SERVICE = 'invoicing.expenses.v1.ExpensesService';
const tenant = { account_id: 7, livemode: true };

/** Resolves when `check` holds; polls with a bound (the server side of a cancel runs after the client's). */
async function eventually(check: () => boolean, what: string, withinMs = 5000): Promise<void> {
  const until = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export function describeGrpcTransportContract(name: string, open: () => Transport): void {
  describe(`gRPC transport contract: ${name}`, () => {
    const exporter = new InMemorySpanExporter();
    const seen: { request?: unknown; ctx?: CallContext; streamEnded?: boolean; uploadReleased?: boolean } = {};
    let release: (() => void) | undefined;
    const handlers = {
      getExpense: async (request: GetExpenseRequest, ctx: CallContext) => {
        seen.request = request;
        seen.ctx = ctx;
        if (request.id === 400) throw Object.assign(fail.invalid('bad_thing', 'the thing is bad', 'thing'), { metadata: { limit: '3' } });
        if (request.id === 500) throw new Error('a secret internal detail');
        if (request.id === 504) await new Promise<void>((resolve) => (release = resolve));
        return GetExpenseResponse.fromPartial({ expense: { id: request.id, note: `note ${request.id}` } });
      },
      getExpenseFile: async function* (request: GetExpenseRequest) {
        seen.streamEnded = false;
        try {
          yield { file: { filename: 'a.pdf', content_type: 'application/pdf', size: 3 } } as GetExpenseFileResponse;
          for (let i = 0; i < (request.id === 0 ? Infinity : request.id); i++) {
            yield { chunk: Buffer.from([i % 256]) } as GetExpenseFileResponse;
            await new Promise((resolve) => setImmediate(resolve));
          }
        } finally {
          seen.streamEnded = true;
        }
      },
      uploadExpense: async (requests: AsyncIterable<UploadExpenseRequest>) => {
        let bytes = 0;
        let filename = '';
        try {
          for await (const part of requests) {
            if (part.header) filename = part.header.filename;
            bytes += part.chunk?.length ?? 0;
          }
        } finally {
          seen.uploadReleased = true;
        }
        return UploadExpenseResponse.fromPartial({ expense: { id: bytes, note: filename } });
      },
    } as unknown as AsyncHandlers<typeof ExpensesServiceService>;
    const transport = open();
    let gateway: ExpensesClient;

    beforeAll(async () => {
      await startTracing('contract', createLogger('contract'), { exporter });
      await transport.serve(restrict(implement(SERVICE, ExpensesServiceService, handlers, createLogger('contract')), { callers: ['gateway'] }));
      gateway = transport.client('gateway');
    });
    afterAll(async () => {
      gateway?.close();
      await transport.stop();
      await stopTracing();
    });

    describe('unary', () => {
      it('the request and the response pass through the codecs', async () => {
        const { expense } = await gateway.getExpense({ tenant, id: 12 });
        expect(expense).toMatchObject({ id: 12, note: 'note 12' });
        expect(seen.request).toEqual({ tenant, id: 12 });
      });

      it('a field the proto lacks is dropped on the way, as on the wire', async () => {
        await gateway.getExpense({ tenant, id: 13, smuggled: 'x' } as unknown as GetExpenseRequest);
        expect(seen.request).toEqual({ tenant, id: 13 });
      });
    });

    describe('metadata', () => {
      it('request id and idempotency token reach the handler', async () => {
        const idempotency = { key: 'k'.repeat(43), fingerprint: 'f'.repeat(43) };
        await gateway.getExpense({ tenant, id: 1 }, { requestId: 'req-123', idempotency });
        expect(seen.ctx?.requestId).toBe('req-123');
        expect(seen.ctx?.idempotency).toEqual(idempotency);
      });

      it('the trace context: the server span is the client span\'s child', async () => {
        const traceId = await inSpan('caller', { kind: SpanKind.INTERNAL }, async (span) => {
          await gateway.getExpense({ tenant, id: 2 });
          return span!.spanContext().traceId;
        });
        const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
        const client = spans.find((s) => s.kind === SpanKind.CLIENT)!;
        const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
        expect(server.parentSpanContext?.spanId).toBe(client.spanContext().spanId);
      });
    });

    describe('errors', () => {
      it('a DomainError arrives as its status with the whole error detail (RemoteCallError)', async () => {
        const err = await gateway.getExpense({ tenant, id: 400 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(RemoteCallError);
        expect(err).toMatchObject({ status: grpc.status.INVALID_ARGUMENT, detail: { code: 'bad_thing', message: 'the thing is bad', field: 'thing', metadata: { limit: '3' } } });
      });

      it('an unexpected error is INTERNAL without its message', async () => {
        await expect(gateway.getExpense({ tenant, id: 500 })).rejects.toMatchObject({ status: grpc.status.INTERNAL, detail: { code: 'internal_error', message: 'internal error' } });
      });
    });

    describe('deadline', () => {
      it('a call past its deadline fails with DEADLINE_EXCEEDED', async () => {
        const started = Date.now();
        await expect(gateway.getExpense({ tenant, id: 504 }, { timeoutMs: 100 })).rejects.toMatchObject({ status: grpc.status.DEADLINE_EXCEEDED });
        expect(Date.now() - started).toBeGreaterThanOrEqual(90);
        release?.();
      });

      it("the caller's deadline, earlier than the call's own timeout, ends the call and reaches the handler as ctx.deadline", async () => {
        const deadline = Date.now() + 150;
        await expect(gateway.getExpense({ tenant, id: 504 }, { timeoutMs: 10_000, deadline })).rejects.toMatchObject({ status: grpc.status.DEADLINE_EXCEEDED });
        release?.();
        // grpc-js sends a relative timeout, read back on receipt: the same end within transit time.
        expect(seen.ctx?.deadline).toBeGreaterThan(deadline - 1000);
        expect(seen.ctx?.deadline).toBeLessThanOrEqual(deadline + 50);
      });
    });

    describe('server-streaming', () => {
      it('delivers every message in order', async () => {
        const got: GetExpenseFileResponse[] = [];
        for await (const message of gateway.getExpenseFile({ tenant, id: 40 })) got.push(message);
        expect(got[0].file).toEqual({ filename: 'a.pdf', content_type: 'application/pdf', size: 3 });
        expect(got.slice(1).map((m) => m.chunk![0])).toEqual([...Array(40).keys()]);
      });

      it('a client that stops reading cancels the stream: the handler stops', async () => {
        let read = 0;
        for await (const _ of gateway.getExpenseFile({ tenant, id: 0 })) if (++read === 3) break;
        await eventually(() => seen.streamEnded === true, 'the endless stream ended');
      });
    });

    describe('client-streaming', () => {
      it('the handler reads every message', async () => {
        const parts: UploadExpenseRequest[] = [
          { header: { tenant, filename: 'r.png', declared_content_type: '', extraction_quota: 1 } },
          ...Array.from({ length: 50 }, () => ({ chunk: Buffer.alloc(1000) })),
        ];
        const { expense } = await gateway.uploadExpense(parts);
        expect(expense).toMatchObject({ id: 50_000, note: 'r.png' });
      });

      it('a source that fails cancels the call: the caller gets the source\'s error, the handler\'s reading is released', async () => {
        seen.uploadReleased = false;
        const broken = async function* () {
          yield { header: { tenant, filename: 'r.png', declared_content_type: '', extraction_quota: 1 } } as UploadExpenseRequest;
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new Error('the HTTP client went away');
        };
        await expect(gateway.uploadExpense(broken())).rejects.toThrow('the HTTP client went away');
        await eventually(() => seen.uploadReleased === true, 'the handler saw the cancel');
      });
    });

    describe('caller check', () => {
      let rendering: ExpensesClient;
      beforeAll(() => {
        rendering = transport.client('rendering');
      });
      afterAll(() => rendering.close());

      it('a caller outside the binding\'s callers gets PERMISSION_DENIED on every kind of RPC, and no handler runs', async () => {
        seen.request = undefined;
        await expect(rendering.getExpense({ tenant, id: 1 })).rejects.toMatchObject({ status: grpc.status.PERMISSION_DENIED });
        const stream = async () => {
          for await (const _ of rendering.getExpenseFile({ tenant, id: 1 })) void _;
        };
        await expect(stream()).rejects.toMatchObject({ status: grpc.status.PERMISSION_DENIED });
        await expect(rendering.uploadExpense([{ chunk: Buffer.from('x') }])).rejects.toMatchObject({ status: grpc.status.PERMISSION_DENIED });
        expect(seen.request).toBeUndefined();
      });
    });
  });
}
