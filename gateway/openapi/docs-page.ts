// A readable reference page at /docs, rendered from the OpenAPI document with handlebars (no CDN).
import Handlebars from 'handlebars';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../services/shared/paths';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function docsPage(doc: Json): string {
  const template = Handlebars.compile(readFileSync(path.join(repoRoot, 'gateway/openapi/docs.hbs'), 'utf8'));
  const operations = Object.entries(doc.paths ?? {}).flatMap(([p, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => ['get', 'post', 'patch', 'delete', 'put'].includes(method))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path: p,
        summary: (op as Json).summary ?? '',
        operationId: (op as Json).operationId,
        responses: Object.entries((op as Json).responses ?? {}).map(([code, r]) => ({
          code,
          description: (r as Json).description ?? String((r as Json).$ref ?? '').split('/').pop(),
        })),
      })),
  );
  return template({ info: doc.info, operations, schemas: Object.keys(doc.components?.schemas ?? {}) });
}
