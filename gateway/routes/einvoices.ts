// GET /accounts/:account_id/{invoices,credit_notes}/:id/einvoice?format=ubl|cii — an issued document as an
// EN 16931 e-invoice (issue #20, docs/e-invoicing.md). The Content-Disposition, ETag and 304 rules of the
// PDF route (gateway/routes/pdfs.ts): the rendering service decides the ETag and answers 304 itself.
import { DocumentType } from '../../gen/invoicing/documents/v1/documents';
import type { Resource } from '../../services/shared/credentials';
import { dispositionOf, downloadHeaders } from '../http/content-disposition';
import { pathId } from '../http/ids';
import { RouteSpec } from './route';

const KINDS: Array<{ segment: Resource & ('invoices' | 'credit_notes'); type: DocumentType; singular: string; what: string }> = [
  { segment: 'invoices', type: DocumentType.DOCUMENT_TYPE_INVOICE, singular: 'Invoice', what: 'invoice' },
  { segment: 'credit_notes', type: DocumentType.DOCUMENT_TYPE_CREDIT_NOTE, singular: 'CreditNote', what: 'credit note' },
];

export const einvoiceRoutes: RouteSpec[] = KINDS.map((kind) => ({
  method: 'get',
  path: `/accounts/:account_id/${kind.segment}/:id/einvoice`,
  operationId: `get${kind.singular}EInvoice`,
  scope: ['read', kind.segment],
  handle: async (ctx, { rendering }) => {
    const format = typeof ctx.query.format === 'string' ? ctx.query.format : '';
    const res = await rendering.exportEInvoice(
      {
        tenant: ctx.tenant,
        document_type: kind.type,
        document_id: pathId(ctx.params.id, kind.what),
        format,
        if_none_match: ctx.req.headers['if-none-match'] ?? '',
      },
      { requestId: ctx.requestId },
    );
    const headers: Record<string, string> = { etag: res.etag, 'cache-control': 'private, no-cache' };
    if (res.not_modified) return { status: 304, headers };
    Object.assign(headers, { 'content-type': res.content_type }, downloadHeaders(dispositionOf(ctx.query.disposition), res.filename));
    return { status: 200, headers, body: Buffer.from(res.xml) };
  },
}));
