// GET /accounts/:account_id/{invoices,credit_notes,proformas,quotes}/:id/pdf — spec §4 "PDF download"
// (credit notes, proformas and quotes: a documented extension). The rendering service decides the
// ETag and answers 304 itself, so a matching If-None-Match never renders nor reads the stored file.
import { DocumentType } from '../../gen/invoicing/documents/v1/documents';
import type { Resource } from '../../services/shared/credentials';
import { dispositionOf, downloadHeaders } from '../http/content-disposition';
import { pathId } from '../http/ids';
import { RouteSpec } from './route';

const KINDS: Array<{ segment: Resource & ('invoices' | 'credit_notes' | 'proformas' | 'quotes'); type: DocumentType; singular: string; what: string }> = [
  { segment: 'invoices', type: DocumentType.DOCUMENT_TYPE_INVOICE, singular: 'Invoice', what: 'invoice' },
  { segment: 'credit_notes', type: DocumentType.DOCUMENT_TYPE_CREDIT_NOTE, singular: 'CreditNote', what: 'credit note' },
  { segment: 'proformas', type: DocumentType.DOCUMENT_TYPE_PROFORMA, singular: 'Proforma', what: 'proforma' },
  { segment: 'quotes', type: DocumentType.DOCUMENT_TYPE_QUOTE, singular: 'Quote', what: 'quote' },
];

export const pdfRoutes: RouteSpec[] = KINDS.map((kind) => ({
  method: 'get',
  path: `/accounts/:account_id/${kind.segment}/:id/pdf`,
  operationId: `get${kind.singular}Pdf`,
  scope: ['read', kind.segment],
  // Revalidated (If-None-Match → 304) far more often than anything else is read.
  lean: true,
  // Spec §8: 30/min per credential, counted apart from the general budget.
  rateClass: 'pdf',
  handle: async (ctx, { rendering }) => {
    const res = await rendering.renderDocumentPdf(
      {
        tenant: ctx.tenant,
        document_type: kind.type,
        document_id: pathId(ctx.params.id, kind.what),
        if_none_match: ctx.req.headers['if-none-match'] ?? '',
      },
      { requestId: ctx.requestId, timeoutMs: 60_000 },
    );
    // The client may keep the file but must revalidate (a PAID mark, an edit of a draft change it).
    const headers: Record<string, string> = { etag: res.etag, 'cache-control': 'private, no-cache' };
    if (res.not_modified) return { status: 304, headers };
    // The same headers through the lean lane and express: both run this handler.
    Object.assign(headers, { 'content-type': 'application/pdf' }, downloadHeaders(dispositionOf(ctx.query.disposition), res.filename));
    return { status: 200, headers, body: Buffer.from(res.pdf) };
  },
}));
