import { createRequire } from 'node:module';
import { Router } from 'express';
import { AUTH_ROUTES } from '../auth.router.js';
import { CATALOG_ROUTES } from '../catalog.router.js';
import { ANNOUNCEMENT_ROUTES } from '../announcements.router.js';
import { HEALTH_ROUTES, SERVICE_VERSION } from '../health.router.js';
import { KEY_ROUTES } from '../keys.router.js';
import { ORG_ROUTES } from '../orgs.router.js';
import { LEADERBOARD_ROUTES } from '../leaderboard.router.js';
import { PAYMENT_ROUTES } from '../payments.router.js';
import type { Route } from '../route.js';
import { STATUS_ROUTES } from '../status.router.js';
import { USAGE_ROUTES } from '../usage.router.js';
import { VIDEO_ROUTES } from '../videos.router.js';
import { openApiDocument, type OpenApiDocument } from './document.js';
import { BRIDGE_ROUTES, V1_ROUTES } from './v1-routes.js';

/** Every route of the REST shim and of /v1, in the order the document lists them. */
export const ALL_ROUTES: Route[] = [AUTH_ROUTES, KEY_ROUTES, USAGE_ROUTES, LEADERBOARD_ROUTES, CATALOG_ROUTES, STATUS_ROUTES, PAYMENT_ROUTES, ANNOUNCEMENT_ROUTES, VIDEO_ROUTES, ORG_ROUTES, HEALTH_ROUTES, V1_ROUTES, BRIDGE_ROUTES].flatMap(
  (table): Route[] => Object.values(table),
);

/** The gateway's interface description (SPEC.md 9: version 1.0.0). */
export function gatewayDocument(sessionCookie: string): OpenApiDocument {
  return openApiDocument(ALL_ROUTES, { version: SERVICE_VERSION, sessionCookie });
}

/** Redoc's standalone bundle (an npm package's static file: the page loads nothing from elsewhere). */
const REDOC_BUNDLE = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

/**
 * The reference page's own rules: Redoc from this origin only, the document from this origin, its
 * styled-components styles inline, its search worker from a blob; nothing may frame it.
 */
const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Redoc starts itself on a `<redoc spec-url>` element: no inline script. */
const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Baikal API reference</title></head>
<body><redoc spec-url="/openapi.json"></redoc><script src="/docs/api/redoc.standalone.js"></script></body>
</html>
`;

/** GET /openapi.json (the document, built once) and GET /docs/api (a human-readable reference of it). */
export function openApiRouter(sessionCookie: string): Router {
  const router = Router();
  const document = JSON.stringify(gatewayDocument(sessionCookie));
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(document);
  });
  router.get('/docs/api', (_req, res) => {
    res.setHeader('content-security-policy', REFERENCE_CSP);
    res.type('html').send(REFERENCE_PAGE);
  });
  router.get('/docs/api/redoc.standalone.js', (_req, res) => {
    res.sendFile(REDOC_BUNDLE, { maxAge: '1d' });
  });
  return router;
}
