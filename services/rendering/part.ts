// The seam between the halves of the rendering service: PDFs (module.ts) and mail (a part of its own,
// listed in module.ts). A part gets the service's dependencies plus the PDF use case, so mail
// attaches the very PDF a download serves (same ETag, same stored file).
import { ServiceBinding } from '../shared/grpc/typed';
import { ServiceDeps } from '../shared/module';
import { Pdfs } from './domain/pdfs';

export interface RenderingPartDeps extends ServiceDeps {
  pdfs: Pdfs;
}

export interface RenderingPart {
  name: string;
  create(deps: RenderingPartDeps): Promise<{ bindings: ServiceBinding[]; stop?: () => Promise<void> }>;
}
