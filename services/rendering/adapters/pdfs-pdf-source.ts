// PdfSource over the service's own PDF use case (in-process): the mail attaches the very PDF a download
// serves — stored when unchanged, rendered otherwise. An invoice that is gone makes the delivery fail for
// good; anything else (renderer overloaded or not available yet) is a temporary failure, retried.
import { DomainError } from '../../shared/errors';
import { Tenant } from '../../shared/tenant';
import { Pdfs } from '../domain/pdfs';
import type { PdfDocument, PdfSource } from '../ports/mail';

export class PdfsPdfSource implements PdfSource {
  constructor(private readonly pdfs: Pdfs) {}

  async pdf(tenant: Tenant, documentId: number): Promise<PdfDocument> {
    try {
      const result = await this.pdfs.pdf(tenant, 'invoice', documentId);
      if (!result.pdf) throw new Error('the renderer returned no PDF');
      return { pdf: result.pdf, filename: result.filename };
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'not_found') {
        throw Object.assign(new Error(`invoice ${documentId} not found; nothing to send`), { code: 'EMESSAGE' });
      }
      // A DomainError's code (renderer_unavailable, …) is not a transport code: keep only its message.
      throw new Error(err instanceof Error ? err.message : String(err));
    }
  }
}
