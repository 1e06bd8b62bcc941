// The PDF of a document: answered from its ETag alone when the client already holds it, else from the
// blob store, else rendered once (concurrent requests for the same ETag share one render) and stored.
import { Tenant } from '../../shared/tenant';
import { DocKind, DocumentSource } from '../ports/document-source';
import { DocumentTemplate } from '../ports/document-template';
import { PdfRenderer } from '../ports/pdf-renderer';
import { PdfStore } from '../ports/pdf-store';
import { paymentQr, QrScheme } from './payment-qr';
import { pdfView } from './pdf-view';
import { dataUri, qrSvg } from './qr-image';
import { etagOf, fileName, matchesIfNoneMatch, pdfKey, RenderInput, renderInput } from './render-input';

/** The brand a banking app shows for the scheme (EPC codes have none: the localised "scan to pay"). */
const SCHEME_NAME: Record<QrScheme, string | undefined> = { spayd: 'QR Platba', pay_by_square: 'PAY by square', epc: undefined };

export interface PdfResult {
  etag: string;
  filename: string;
  notModified: boolean;
  /** null when not modified. */
  pdf: Buffer | null;
  /** How the bytes were obtained (tests and metrics). */
  source: 'none' | 'store' | 'rendered';
}

export interface PdfsDeps {
  source: DocumentSource;
  template: DocumentTemplate;
  renderer: PdfRenderer;
  store: PdfStore;
}

export class Pdfs {
  private readonly inflight = new Map<string, Promise<Buffer>>();

  constructor(private readonly deps: PdfsDeps) {}

  async pdf(tenant: Tenant, kind: DocKind, id: number, ifNoneMatch = ''): Promise<PdfResult> {
    const [doc, workspace] = await Promise.all([this.deps.source.document(tenant, kind, id), this.deps.source.workspace(tenant.account_id)]);
    const input = renderInput(tenant, doc, workspace, this.deps.template.version);
    const etag = etagOf(input);
    const filename = fileName(doc, input.language);
    if (matchesIfNoneMatch(ifNoneMatch, etag)) return { etag, filename, notModified: true, pdf: null, source: 'none' };
    const key = pdfKey(tenant, etag);
    const stored = await this.deps.store.get(key);
    if (stored) return { etag, filename, notModified: false, pdf: stored, source: 'store' };
    const pdf = await this.renderOnce(key, input);
    return { etag, filename, notModified: false, pdf, source: 'rendered' };
  }

  /** The HTML of a document as it would print (tests, template work). */
  async html(input: RenderInput): Promise<string> {
    const qr = paymentQr(input.doc);
    const logo = input.logo_key ? await this.deps.source.logo(input.logo_key) : null;
    return this.deps.template.html(
      pdfView({
        doc: input.doc,
        supplier: input.supplier,
        language: input.language,
        qr: qr ? { caption: SCHEME_NAME[qr.scheme], image_data_uri: dataUri(await qrSvg(qr.payload), 'image/svg+xml') } : null,
        logo_data_uri: logo ? dataUri(logo.data, logo.contentType) : null,
      }),
    );
  }

  private renderOnce(key: string, input: RenderInput): Promise<Buffer> {
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = (async () => {
        const pdf = await this.deps.renderer.render(await this.html(input));
        await this.deps.store.put(key, pdf);
        return pdf;
      })().finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }
}
