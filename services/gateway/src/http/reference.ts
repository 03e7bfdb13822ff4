import path from 'node:path';
import express from 'express';
import { API_BASE, API_VERSION } from '@erp/contracts';
import { MESSAGES, sendError } from './errors';
import { REFERENCE_PATHS, type OpenApiDocument } from '../openapi/openapi';

/** Files of the viewer served from its npm package (never from a CDN: partners' networks may block one). */
const VIEWER_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const VIEWER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

const ASSETS = `${API_BASE}${REFERENCE_PATHS.docs}/assets`;

const PAGE = `<!doctype html>
<html lang="es">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API externa ${API_VERSION}: referencia</title>
<link rel="icon" type="image/png" href="${ASSETS}/favicon-32x32.png">
<link rel="stylesheet" href="${ASSETS}/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<div id="webhooks"></div>
<script src="${ASSETS}/swagger-ui-bundle.js"></script>
<script src="${ASSETS}/init.js"></script>
</body>
</html>
`;

// A separate file, so the page runs under a CSP without inline scripts. The webhooks have their
// own document (their own server), shown below the partner API's.
const INIT = `const options = { docExpansion: 'list', defaultModelsExpandDepth: 0, displayRequestDuration: true, validatorUrl: null };
window.ui = SwaggerUIBundle({ ...options, url: ${JSON.stringify(`${API_BASE}${REFERENCE_PATHS.document}`)}, dom_id: '#reference', deepLinking: true });
window.webhooksUi = SwaggerUIBundle({ ...options, url: ${JSON.stringify(`${API_BASE}${REFERENCE_PATHS.webhooks}`)}, dom_id: '#webhooks' });
`;

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // The viewer sets inline styles on its elements.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The API reference: the OpenAPI documents and a page that renders them, below the API base,
 * without API key or quota (partners read it before they have a key).
 */
export function referenceRouter(document: OpenApiDocument, webhooks: OpenApiDocument): express.Router {
  const router = express.Router({ strict: false });
  for (const [route, served] of [
    [REFERENCE_PATHS.document, document],
    [REFERENCE_PATHS.webhooks, webhooks],
  ] as const) {
    const body = `${JSON.stringify(served, null, 2)}\n`;
    router.get(route, (_req, res) => {
      res.setHeader('Cache-Control', 'no-cache');
      res.type('application/json').send(body);
    });
  }
  router.get(REFERENCE_PATHS.docs, (_req, res) => {
    res.setHeader('Content-Security-Policy', CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/html').send(PAGE);
  });
  router.get(`${REFERENCE_PATHS.docs}/assets/init.js`, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/javascript').send(INIT);
  });
  router.get(`${REFERENCE_PATHS.docs}/assets/:file`, (req, res) => {
    const file = String(req.params.file);
    const type = Object.hasOwn(VIEWER_FILES, file) ? VIEWER_FILES[file] : undefined;
    if (!type) return sendError(res, 404, 'ruta_desconocida', MESSAGES.routeNotFound);
    res.sendFile(file, { root: VIEWER_DIR, maxAge: '1d', headers: { 'Content-Type': type } });
  });
  for (const route of [REFERENCE_PATHS.document, REFERENCE_PATHS.webhooks, REFERENCE_PATHS.docs]) {
    router.all(route, (_req, res) => {
      res.setHeader('Allow', 'GET, HEAD');
      sendError(res, 405, 'metodo_no_admitido', MESSAGES.methodNotAllowed);
    });
  }
  return router;
}
