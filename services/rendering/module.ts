// Wires the rendering service: documents and identity behind the DocumentSource port, Chromium behind
// the renderer, the blob store behind the PDF store; pre-rendering on `issued` events; the parts
// (mail) that build on the PDFs. Chromium is launched in the background: without it the service still
// starts and PDF requests answer 503 renderer_unavailable.
import { RenderingServiceService } from '../../gen/invoicing/rendering/v1/rendering';
import { storeChangeCounters } from '../shared/change-counters';
import { ConfigError, readEnv } from '../shared/config';
import { implement, restrict } from '../shared/grpc/typed';
import { ServiceModule } from '../shared/module';
import { blobPdfStore } from './adapters/blob-pdf-store';
import { ChromiumPool, DEFAULT_WORKSPACE_QUEUE_MAX, defaultWorkspaceConcurrency } from './adapters/chromium-pool';
import { GrpcDocumentSource } from './adapters/grpc-document-source';
import { handlebarsTemplate } from './adapters/handlebars-template';
import { subscribePrerender } from './adapters/prerender-consumer';
import { EInvoices } from './domain/einvoices';
import { Pdfs } from './domain/pdfs';
import { renderingHandlers } from './grpc/handlers';
import { eventsPart } from './events';
import { mailPart } from './mail';
import { RenderingPart } from './part';

/** The parts built on the PDFs. */
const parts: RenderingPart[] = [mailPart, eventsPart];

/** RENDER_TEST_HOLD_FILE (ChromiumPoolOptions.testHoldFile): test systems only, refused in production. */
function testHoldFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = env.RENDER_TEST_HOLD_FILE;
  if (file && env.NODE_ENV === 'production') throw new ConfigError('RENDER_TEST_HOLD_FILE must not be set in production');
  return file || undefined;
}

export const renderingModule: ServiceModule = {
  name: 'rendering',
  // PDFs in the blob store; the mail part paginates deliveries.
  needs: { secrets: ['cursorSecret'], blobs: true, peers: ['documents', 'identity'] },
  async create(deps) {
    const { adapters, log, peers } = deps;
    const { str, int } = readEnv();
    const poolSize = Math.max(1, int('RENDER_POOL_SIZE', 2));
    const renderer = new ChromiumPool({
      executablePath: str('CHROMIUM_PATH', '/usr/bin/chromium'),
      poolSize,
      timeoutMs: Math.max(1000, int('RENDER_TIMEOUT_MS', 15_000)),
      queueMax: int('RENDER_QUEUE_MAX', 32),
      // Fair sharing between workspaces (docs/rendering.md): renders at once and renders waiting, per workspace.
      workspaceConcurrency: Math.max(1, int('RENDER_WORKSPACE_CONCURRENCY', defaultWorkspaceConcurrency(poolSize))),
      workspaceQueueMax: Math.max(0, int('RENDER_WORKSPACE_QUEUE_MAX', DEFAULT_WORKSPACE_QUEUE_MAX)),
      log: log.child({ component: 'chromium' }),
      testHoldFile: testHoldFile(),
    });
    renderer.start();
    // The documents and identity services share this store: their change counters validate kept ETags.
    const source = new GrpcDocumentSource({ documents: peers.documents, identity: peers.identity }, adapters.blobs, storeChangeCounters(adapters.store));
    const pdfs = new Pdfs(
      { source, template: handlebarsTemplate(), renderer, store: blobPdfStore(adapters.blobs, { cacheBytes: int('RENDER_PDF_CACHE_MB', 16) * 1024 * 1024 }) },
      { cacheMax: int('RENDER_ETAG_CACHE_MAX', 5000), cacheTtlMs: int('RENDER_ETAG_CACHE_TTL_MS', 60_000) },
    );
    const prerender = await subscribePrerender(adapters.bus, pdfs, log);
    const built = await Promise.all(parts.map((part) => part.create({ ...deps, log: log.child({ part: part.name }), pdfs })));
    return {
      bindings: [
        restrict(implement('invoicing.rendering.v1.RenderingService', RenderingServiceService, renderingHandlers(pdfs, new EInvoices(source)), log), { callers: ['gateway'] }),
        ...built.flatMap((b) => b.bindings),
      ],
      stop: async () => {
        for (const b of built) await b.stop?.();
        await prerender.close();
        await renderer.close();
        source.close();
      },
    };
  },
};
