// Turns one self-contained HTML page into a PDF. Failures are DomainErrors of kind `unavailable`
// (renderer_unavailable, renderer_overloaded, render_timeout, render_failed) carrying a Retry-After.
import { Tenant } from '../../shared/tenant';

/** Whose render it is and how urgent: the renderer shares its pages fairly between workspaces. */
export interface RenderJob {
  tenant: Tenant;
  /**
   * A pre-render nobody is waiting for: it yields to every download. Read when the next render is
   * chosen, so a download that joins a queued pre-render (same PDF) clears it and is not kept waiting.
   */
  background?: boolean;
}

export interface PdfRenderer {
  /** Without a job the render is interactive, in a lane of its own (tests, tools). */
  render(html: string, job?: RenderJob): Promise<Buffer>;
  close(): Promise<void>;
}
