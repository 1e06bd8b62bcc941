// /accounts/:account_id/expenses/upload, …/:id/file and …/:id/retry_extraction — spec §3, §4 "Upload",
// "File download", §8. The file goes to the service as a client-streaming RPC (64 KiB chunks from the
// gateway's spool, gateway/http/upload.ts) and comes back as a server-streaming one, so neither side
// holds a whole file.
import { GetExpenseFileResponse, UploadExpenseRequest } from '../../gen/invoicing/expenses/v1/expenses';
import { judgeFileType } from '../../services/shared/file-types';
import { dispositionOf, downloadHeaders } from '../http/content-disposition';
import { HttpError } from '../http/errors';
import { pathId } from '../http/ids';
import { RequestContext } from '../http/context';
import { presentExpense } from './expense-presenters';
import { RouteSpec } from './route';

const BASE = '/accounts/:account_id/expenses';
/** The plan feature an upload needs (spec §4 "Upload"). */
export const UPLOAD_FEATURE = 'attachment_to_document';
const QUOTA = 'ai_expense_extractions';

/** Spec §4 "Upload": 402 with upgrade_url without the plan feature — the upload section's rule, not §7's 403 row
 * (docs/decisions.md). The workspace's plan comes with its access (identity, cached): checked before the body. */
function requireUploadFeature(ctx: RequestContext): void {
  if (!ctx.access?.subscription.features.includes(UPLOAD_FEATURE)) {
    throw new HttpError(402, 'feature_not_in_plan', `this plan does not include ${UPLOAD_FEATURE}; upgrade to upload files`, { feature: UPLOAD_FEATURE });
  }
}

/** The file's type from its first bytes, by the rule the expenses service applies again (422, field `file`). */
async function screenFileType(head: Buffer, declaredType: string | null): Promise<void> {
  const verdict = await judgeFileType(head, declaredType);
  if (!verdict.accepted) throw new HttpError(422, verdict.code, verdict.message, { field: 'file' });
}

const allowanceOf = (ctx: RequestContext) => Number(ctx.access?.subscription.quotas[QUOTA] ?? 0);

async function* uploadMessages(ctx: RequestContext): AsyncGenerator<UploadExpenseRequest> {
  const upload = ctx.upload!;
  yield {
    header: { tenant: ctx.tenant, filename: upload.filename, declared_content_type: upload.declaredType ?? '', extraction_quota: allowanceOf(ctx) },
  };
  for await (const chunk of upload.chunks()) yield { chunk };
}

export const expenseFileRoutes: RouteSpec[] = [
  {
    method: 'post',
    path: `${BASE}/upload`,
    operationId: 'uploadExpense',
    scope: ['manage', 'expenses'],
    upload: { admit: requireUploadFeature, screen: screenFileType },
    handle: async (ctx, { expenses }) => {
      const res = await expenses.uploadExpense(uploadMessages(ctx), { requestId: ctx.requestId, timeoutMs: 60_000 });
      const expense = presentExpense(res.expense!);
      return { status: 201, body: expense, headers: { location: `/api/v1/accounts/${ctx.tenant!.account_id}/expenses/${expense.id}` } };
    },
  },
  {
    method: 'get',
    path: `${BASE}/:id/file`,
    operationId: 'getExpenseFile',
    scope: ['read', 'expenses'],
    handle: async (ctx, { expenses }) => {
      const messages = expenses.getExpenseFile({ tenant: ctx.tenant, id: pathId(ctx.params.id, 'expense') }, { requestId: ctx.requestId, timeoutMs: 60_000 });
      const iterator = messages[Symbol.asyncIterator]();
      // The first message describes the file (or the call fails with 404) before any header is sent.
      const first = await iterator.next();
      const file = first.done ? undefined : (first.value as GetExpenseFileResponse).file;
      if (!file) throw new HttpError(404, 'resource_not_found', 'expense file not found');
      return {
        status: 200,
        headers: {
          'content-type': file.content_type,
          'content-length': String(file.size),
          'cache-control': 'private, no-cache',
          ...downloadHeaders(dispositionOf(ctx.query.disposition), file.filename),
        },
        stream: (async function* () {
          for (;;) {
            const next = await iterator.next();
            if (next.done) return;
            if (next.value.chunk) yield next.value.chunk;
          }
        })(),
      };
    },
  },
  {
    method: 'post',
    path: `${BASE}/:id/retry_extraction`,
    operationId: 'retryExpenseExtraction',
    scope: ['manage', 'expenses'],
    handle: async (ctx, { expenses }) => {
      const res = await expenses.retryExtraction({ tenant: ctx.tenant, id: pathId(ctx.params.id, 'expense'), extraction_quota: allowanceOf(ctx) }, { requestId: ctx.requestId });
      return { status: 200, body: presentExpense(res.expense!) };
    },
  },
];
