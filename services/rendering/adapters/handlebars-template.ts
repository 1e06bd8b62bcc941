// The DocumentTemplate port over handlebars: templates/document.hbs (+ partials) from the checkout or
// image. The version is a hash of the template sources, so editing a template changes every ETag.
import Handlebars from 'handlebars';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../shared/paths';
import { DocumentTemplate, PdfView } from '../ports/document-template';

const TEMPLATES = path.join(repoRoot, 'services/rendering/templates');

export function handlebarsTemplate(): DocumentTemplate {
  const hb = Handlebars.create();
  const main = readFileSync(path.join(TEMPLATES, 'document.hbs'), 'utf8');
  const party = readFileSync(path.join(TEMPLATES, 'party.hbs'), 'utf8');
  hb.registerPartial('party', party);
  // Every value is HTML-escaped (document text is user input); data URIs are plain attribute text.
  const render = hb.compile<PdfView>(main);
  const version = createHash('sha256').update(main).update('\0').update(party).digest('hex').slice(0, 16);
  return { version, html: (view) => render(view) };
}
