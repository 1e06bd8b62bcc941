// Turns one self-contained HTML page into a PDF. Failures are DomainErrors of kind `unavailable`
// (renderer_unavailable, renderer_overloaded, render_timeout, render_failed) carrying a Retry-After.
export interface PdfRenderer {
  render(html: string): Promise<Buffer>;
  close(): Promise<void>;
}
