// The PDF of a document: answered from its ETag alone when the client already holds it, else from the
// blob store, else rendered once (concurrent requests for the same ETag share one render) and stored.
// The ETag of an unchanged document comes from memory (PrintedCache), validated by its revision.
// Every render names its workspace (the renderer shares its pages fairly between workspaces); a
// pre-render is background work that yields to downloads, until a download joins it.
import { Tenant } from '../../shared/tenant';
import { DocKind, DocumentSource } from '../ports/document-source';
import { DocumentTemplate } from '../ports/document-template';
import { PdfRenderer, RenderJob } from '../ports/pdf-renderer';
import { PdfStore } from '../ports/pdf-store';
import { paymentQr, QrScheme } from './payment-qr';
import { pdfView } from './pdf-view';
import { Printed, PrintedCache } from './printed-cache';
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

export interface PdfsOptions {
  /** Documents whose ETag is kept in memory (0: none). */
  cacheMax?: number;
  /** How long a kept ETag lives at most, from its lookup (bounds unacknowledged changes only). */
  cacheTtlMs?: number;
  now?: () => number;
}

export interface PdfRequestOptions {
  /** A pre-render nobody waits for (after issue or payment): yields to downloads. */
  background?: boolean;
}

export class Pdfs {
  /** Renders in flight by blob key, with their job: a download that joins a pre-render makes it urgent. */
  private readonly inflight = new Map<string, { pdf: Promise<Buffer>; job: RenderJob }>();
  private readonly printedCache: PrintedCache;
  private readonly now: () => number;

  constructor(
    private readonly deps: PdfsDeps,
    options: PdfsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.printedCache = new PrintedCache(options.cacheMax ?? 5000, options.cacheTtlMs ?? 60_000, this.now);
  }

  async pdf(tenant: Tenant, kind: DocKind, id: number, ifNoneMatch = '', options: PdfRequestOptions = {}): Promise<PdfResult> {
    const { etag, filename, key, input } = await this.printed(tenant, kind, id);
    if (matchesIfNoneMatch(ifNoneMatch, etag)) return { etag, filename, notModified: true, pdf: null, source: 'none' };
    const stored = await this.deps.store.get(key);
    if (stored) return { etag, filename, notModified: false, pdf: stored, source: 'store' };
    const pdf = await this.renderOnce(key, input, options.background === true);
    return { etag, filename, notModified: false, pdf, source: 'rendered' };
  }

  /**
   * The document's current PDF, stored, with its blob key and the document's updated_at in it: what a
   * mail delivery pins when a send is accepted (it then attaches that stored file on every attempt).
   */
  async current(tenant: Tenant, kind: DocKind, id: number): Promise<{ etag: string; filename: string; key: string; documentUpdatedAt: string; pdf: Buffer }> {
    const { etag, filename, key, input } = await this.printed(tenant, kind, id);
    const pdf = (await this.deps.store.get(key)) ?? (await this.renderOnce(key, input, false));
    return { etag, filename, key, documentUpdatedAt: input.doc.updated_at, pdf };
  }

  /** A stored PDF by its key (a pinned version); null when it is not stored. */
  stored(key: string): Promise<Buffer | null> {
    return this.deps.store.get(key);
  }

  /**
   * The document's ETag and what it is a function of: kept from an earlier request while the revision
   * (read first) is the one it was kept under, else read from the document's and workspace's services.
   */
  private async printed(tenant: Tenant, kind: DocKind, id: number): Promise<Printed> {
    const cacheKey = `${tenant.account_id}:${tenant.livemode ? 'live' : 'test'}:${kind}:${id}`;
    const startedAt = this.now();
    const revision = (await this.deps.source.revision?.(tenant, kind, id)) ?? null;
    const kept = revision === null ? undefined : this.printedCache.get(cacheKey, revision);
    if (kept) return kept;
    const [doc, workspace] = await Promise.all([this.deps.source.document(tenant, kind, id), this.deps.source.workspace(tenant.account_id)]);
    const input = renderInput(tenant, doc, workspace, this.deps.template.version);
    const etag = etagOf(input);
    const printed: Printed = { etag, filename: fileName(doc, input.language), key: pdfKey(tenant, etag), input };
    // Read before the services were asked: their answers are at least as new as this revision.
    if (revision !== null) this.printedCache.set(cacheKey, revision, startedAt, printed);
    return printed;
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

  private renderOnce(key: string, input: RenderInput, background: boolean): Promise<Buffer> {
    const pending = this.inflight.get(key);
    if (pending) {
      // Someone waits for it now: it no longer yields (read by the renderer when it picks the next render).
      if (!background) pending.job.background = false;
      return pending.pdf;
    }
    const job: RenderJob = { tenant: input.tenant, background };
    const pdf = (async () => {
      const rendered = await this.deps.renderer.render(await this.html(input), job);
      await this.deps.store.put(key, rendered);
      return rendered;
    })().finally(() => this.inflight.delete(key));
    this.inflight.set(key, { pdf, job });
    return pdf;
  }
}
