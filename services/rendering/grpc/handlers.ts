// Thin gRPC handlers: decode, call the domain, encode. Errors are DomainErrors thrown below.
import { DocumentType } from '../../../gen/invoicing/documents/v1/documents';
import { RenderingServiceService } from '../../../gen/invoicing/rendering/v1/rendering';
import { fail } from '../../shared/errors';
import { AsyncHandlers } from '../../shared/grpc/typed';
import { requireTenant } from '../../shared/tenant';
import { DocKind } from '../ports/document-source';
import { EInvoices } from '../domain/einvoices';
import { Pdfs } from '../domain/pdfs';

const KIND_OF_TYPE: Partial<Record<DocumentType, DocKind>> = {
  [DocumentType.DOCUMENT_TYPE_UNSPECIFIED]: 'invoice',
  [DocumentType.DOCUMENT_TYPE_INVOICE]: 'invoice',
  [DocumentType.DOCUMENT_TYPE_CREDIT_NOTE]: 'credit_note',
  [DocumentType.DOCUMENT_TYPE_PROFORMA]: 'proforma',
  [DocumentType.DOCUMENT_TYPE_QUOTE]: 'quote',
};

function kindOf(type: DocumentType, id: number): DocKind {
  const kind = KIND_OF_TYPE[type];
  if (!kind) throw fail.invalid('invalid_document_type', 'unknown document type', 'document_type');
  // Ids are positive; anything else names no document.
  if (!Number.isSafeInteger(id) || id <= 0) throw fail.notFound(kind.replace('_', ' '));
  return kind;
}

export function renderingHandlers(pdfs: Pdfs, einvoices: EInvoices): AsyncHandlers<typeof RenderingServiceService> {
  return {
    renderDocumentPdf: async (req) => {
      const kind = kindOf(req.document_type, req.document_id);
      const result = await pdfs.pdf(requireTenant(req.tenant), kind, req.document_id, req.if_none_match);
      return {
        pdf: result.pdf ?? Buffer.alloc(0),
        etag: result.etag,
        filename: result.filename,
        not_modified: result.notModified,
        from_store: result.source === 'store',
      };
    },
    exportEInvoice: async (req) => {
      const kind = kindOf(req.document_type, req.document_id);
      const result = await einvoices.export(requireTenant(req.tenant), kind, req.document_id, req.format, req.if_none_match);
      return {
        xml: result.xml ?? Buffer.alloc(0),
        etag: result.etag,
        filename: result.filename,
        not_modified: result.notModified,
        content_type: result.contentType,
      };
    },
  };
}
