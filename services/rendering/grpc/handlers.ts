// Thin gRPC handlers: decode, call the domain, encode. Errors are DomainErrors thrown below.
import { DocumentType } from '../../../gen/invoicing/documents/v1/documents';
import { RenderingServiceService } from '../../../gen/invoicing/rendering/v1/rendering';
import { fail } from '../../shared/errors';
import { AsyncHandlers } from '../../shared/grpc/typed';
import { requireTenant } from '../../shared/tenant';
import { DocKind } from '../ports/document-source';
import { Pdfs } from '../domain/pdfs';

const KIND_OF_TYPE: Partial<Record<DocumentType, DocKind>> = {
  [DocumentType.DOCUMENT_TYPE_UNSPECIFIED]: 'invoice',
  [DocumentType.DOCUMENT_TYPE_INVOICE]: 'invoice',
  [DocumentType.DOCUMENT_TYPE_CREDIT_NOTE]: 'credit_note',
  [DocumentType.DOCUMENT_TYPE_PROFORMA]: 'proforma',
  [DocumentType.DOCUMENT_TYPE_QUOTE]: 'quote',
};

export function renderingHandlers(pdfs: Pdfs): AsyncHandlers<typeof RenderingServiceService> {
  return {
    renderDocumentPdf: async (req) => {
      const kind = KIND_OF_TYPE[req.document_type];
      if (!kind) throw fail.invalid('invalid_document_type', 'unknown document type', 'document_type');
      // Ids are positive; anything else names no document.
      if (!Number.isSafeInteger(req.document_id) || req.document_id <= 0) throw fail.notFound(kind.replace('_', ' '));
      const result = await pdfs.pdf(requireTenant(req.tenant), kind, req.document_id, req.if_none_match);
      return {
        pdf: result.pdf ?? Buffer.alloc(0),
        etag: result.etag,
        filename: result.filename,
        not_modified: result.notModified,
        from_store: result.source === 'store',
      };
    },
  };
}
