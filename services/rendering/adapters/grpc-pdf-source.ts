// PdfSource over gRPC: RenderingService.RenderDocumentPdf, which serves the stored PDF when the document
// is unchanged and renders it otherwise. A document that is gone makes the delivery fail for good; an
// unavailable renderer (overloaded, no Chromium yet) is a temporary failure, retried with backoff.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { RenderDocumentPdfRequest, RenderingServiceService } from '../../../gen/invoicing/rendering/v1/rendering';
import { RemoteCallError } from '../../shared/grpc/errors';
import { AsyncClient, connect } from '../../shared/grpc/typed';
import { Tenant } from '../../shared/tenant';
import type { PdfDocument, PdfSource } from '../ports/mail';

/** An invoice's PDF (the only document type that is sent), rendered afresh or served from storage. */
const renderRequest = (tenant: Tenant, documentId: number): RenderDocumentPdfRequest =>
  RenderDocumentPdfRequest.fromPartial({ tenant, document_id: documentId });

export class GrpcPdfSource implements PdfSource {
  private client?: AsyncClient<typeof RenderingServiceService> & { close(): void };

  /** `address` may be resolved late (the service's own gRPC address is known only once it listens). */
  constructor(private readonly address: () => string | undefined) {}

  async pdf(tenant: Tenant, documentId: number): Promise<PdfDocument> {
    const address = this.address();
    if (!address) throw Object.assign(new Error('the rendering service is not reachable yet'), { code: 'ECONNECTION' });
    this.client ??= connect(RenderingServiceService, 'invoicing.rendering.v1.RenderingService', address);
    try {
      const res = await this.client.renderDocumentPdf(renderRequest(tenant, documentId), { timeoutMs: 60_000 });
      return { pdf: Buffer.from(res.pdf), filename: res.filename || `invoice-${documentId}.pdf` };
    } catch (err) {
      if (err instanceof RemoteCallError && err.status === GrpcStatus.NOT_FOUND) {
        throw Object.assign(new Error(`document ${documentId} not found; nothing to send`), { code: 'EMESSAGE' });
      }
      throw err;
    }
  }

  close(): void {
    this.client?.close();
  }
}
