// Thin gRPC handlers of upload (client-streaming), the file download (server-streaming) and
// retry_extraction. Errors are DomainErrors thrown by the domain (domain/expense-files.ts).
import { ExpensesServiceService, UploadExpenseRequest } from '../../../gen/invoicing/expenses/v1/expenses';
import { fail } from '../../shared/errors';
import { AsyncHandlers } from '../../shared/grpc/typed';
import { requireTenant } from '../../shared/tenant';
import { ExpenseFiles } from '../domain/expense-files';
import { toExpenseMessage } from './mapping';

type FileHandlers = Pick<AsyncHandlers<typeof ExpensesServiceService>, 'uploadExpense' | 'getExpenseFile' | 'retryExtraction'>;

/** The file's bytes: every message after the header must be a chunk. */
async function* chunksOf(messages: AsyncIterator<UploadExpenseRequest>): AsyncGenerator<Uint8Array> {
  for (;;) {
    const next = await messages.next();
    if (next.done) return;
    if (!next.value.chunk) throw fail.invalid('invalid_upload', 'an upload carries one header and then only file chunks');
    yield next.value.chunk;
  }
}

export function fileHandlers(files: ExpenseFiles): FileHandlers {
  return {
    uploadExpense: async (requests, ctx) => {
      const messages = requests[Symbol.asyncIterator]();
      const first = await messages.next();
      const header = first.done ? undefined : first.value.header;
      if (!header) throw fail.invalid('invalid_upload', 'an upload starts with its header');
      const chunks = chunksOf(messages);
      const expense = await files.upload(
        {
          tenant: requireTenant(header.tenant),
          filename: header.filename,
          declaredType: header.declared_content_type || null,
          allowance: header.extraction_quota,
        },
        chunks,
        ctx.idempotency,
      );
      // An idempotent replay answers without reading the file: take the rest of the stream (nothing is kept).
      for await (const _ of chunks);
      return { expense: toExpenseMessage(expense) };
    },
    getExpenseFile: async function* (req) {
      const { file, stream } = await files.openFile(requireTenant(req.tenant), req.id);
      try {
        yield { file: { filename: file.filename, content_type: file.content_type, size: file.size } };
        for await (const chunk of stream as AsyncIterable<Buffer>) yield { chunk };
      } finally {
        stream.destroy();
      }
    },
    retryExtraction: async (req, ctx) => ({
      expense: toExpenseMessage(await files.retry(requireTenant(req.tenant), req.id, req.extraction_quota, ctx.idempotency)),
    }),
  };
}
