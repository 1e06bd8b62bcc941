// The reference page at /docs: Scalar's API reference over the served OpenAPI document, with "try it".
// Its assets come from node_modules and this folder, never a CDN, so the page works offline and under
// a strict Content-Security-Policy: scripts from this origin only (no inline script), requests to this
// origin only, no fonts or telemetry from Scalar's servers (docs.js turns them off). Styles may be
// inline because the renderer injects its stylesheet at run time; nothing else is relaxed. The empty
// data: icon keeps browsers from asking for /favicon.ico (a 404, logged as a console error).
import express from 'express';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../../services/shared/paths';

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Invoicing API — reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>The reference needs JavaScript; the machine-readable document is <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</noscript>
<div id="reference"></div>
<script src="/docs/assets/scalar.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>
`;

const ASSETS: Record<string, string> = {
  'scalar.js': require.resolve('@scalar/api-reference/browser/standalone.js', { paths: [repoRoot] }),
  'docs.js': path.join(repoRoot, 'gateway/openapi/docs.js'),
};

/** GET /docs and its assets, each answered with the page's Content-Security-Policy. */
export function docsRoutes(): express.Router {
  const router = express.Router();
  const assets = new Map(Object.entries(ASSETS).map(([name, file]) => [name, readFileSync(file)]));
  router.use('/docs', (_req, res, next) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  router.get('/docs', (_req, res) => {
    res.type('html').setHeader('Cache-Control', 'no-cache').send(PAGE);
  });
  router.get('/docs/assets/:name', (req, res, next) => {
    const asset = assets.get(req.params.name);
    if (!asset) return next();
    res.type('js').setHeader('Cache-Control', 'public, max-age=3600').send(asset);
  });
  return router;
}
