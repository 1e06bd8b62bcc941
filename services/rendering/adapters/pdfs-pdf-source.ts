// PdfSource over the service's own PDF use case (in-process): a delivery pins the very PDF a download
// serves (same ETag, same stored file) when its send is accepted, and every attempt reads that file
// back by its key. An invoice that is gone, or a pinned file no longer stored, makes the delivery fail
// for good; anything else (renderer overloaded or not available yet) is a temporary failure, retried.
import { DomainError } from '../../shared/errors';
import { Tenant } from '../../shared/tenant';
import { Pdfs } from '../domain/pdfs';
import type { PdfDocument, PdfSource, PinnedPdf } from '../ports/mail';

const permanent = (message: string) => Object.assign(new Error(message), { code: 'EMESSAGE' });

export class PdfsPdfSource implements PdfSource {
  constructor(private readonly pdfs: Pdfs) {}

  async pin(tenant: Tenant, documentId: number): Promise<PinnedPdf> {
    try {
      const current = await this.pdfs.current(tenant, 'invoice', documentId);
      return { etag: current.etag, key: current.key, filename: current.filename, document_updated_at: current.documentUpdatedAt };
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'not_found') throw permanent(`invoice ${documentId} not found; nothing to send`);
      // A DomainError's code (renderer_unavailable, …) is not a transport code: keep only its message.
      throw new Error(err instanceof Error ? err.message : String(err));
    }
  }

  async read(pinned: PinnedPdf): Promise<PdfDocument> {
    const pdf = await this.pdfs.stored(pinned.key);
    if (!pdf) throw permanent(`the PDF sent for (ETag ${pinned.etag}) is no longer stored; send again`);
    return { pdf, filename: pinned.filename };
  }
}
