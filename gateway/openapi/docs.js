// Mounts Scalar's API reference on /docs (gateway/openapi/docs-page.ts). A file, not an inline script,
// so the page's Content-Security-Policy needs no 'unsafe-inline' for scripts. Everything that would
// reach Scalar's servers is off: its web fonts, telemetry, the AI agent; "try it" sends requests to
// this origin directly (no proxy).
/* global Scalar */
Scalar.createApiReference('#reference', {
  url: '/api/v1/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  documentDownloadType: 'json',
  defaultOpenAllTags: true,
  showOperationId: true,
});
