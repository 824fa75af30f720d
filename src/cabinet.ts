import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** Where `npm run build` puts the cabinet: web/dist, seen from dist/src/ (built) or src/ (under vitest). */
const WEB_ROOT = path.resolve(HERE, path.basename(path.dirname(HERE)) === 'dist' ? '../../web/dist' : '../web/dist');

/**
 * The cabinet's own rules: its scripts and styles come from this origin only (no inline script, no CDN),
 * it talks to this origin only (GraphQL over HTTP and graphql-ws), plays videos from the Range endpoint,
 * and nothing may frame it. The API keeps its stricter `default-src 'none'`.
 */
export const CABINET_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  // data: fonts: GraphiQL's stylesheet embeds its fonts (a font cannot run code).
  "font-src 'self' data:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Paths that are the cabinet's pages: `/` and everything under `/app/` (no API lives there, so nothing is shadowed). */
export function isCabinetPage(pathname: string): boolean {
  return pathname === '/' || pathname === '/app' || pathname.startsWith('/app/');
}

/** The built pages, or null when the cabinet was not built (tests of the API alone, a source checkout). */
export function loadCabinet(root = WEB_ROOT): { root: string; index: string; graphiql: string | null } | null {
  const indexFile = path.join(root, 'index.html');
  if (!existsSync(indexFile)) return null;
  const graphiqlFile = path.join(root, 'graphiql.html');
  return { root, index: readFileSync(indexFile, 'utf8'), graphiql: existsSync(graphiqlFile) ? readFileSync(graphiqlFile, 'utf8') : null };
}

/**
 * Serves the single-page cabinet: hashed assets under /assets (cached for a year: their names change with
 * their content), and index.html for GET/HEAD of a cabinet page (an SPA fallback limited to `/` and
 * `/app/*`, so `/v1`, `/graphql`, `/trpc` and every REST path answer as the API, never as a page).
 */
export function cabinetPages(cabinet: ReturnType<typeof loadCabinet>): Router {
  const router = express.Router();
  if (!cabinet) return router;
  router.use(
    '/assets',
    express.static(path.join(cabinet.root, 'assets'), {
      index: false,
      fallthrough: false,
      setHeaders: (res) => {
        res.setHeader('cache-control', 'public, max-age=31536000, immutable');
        res.setHeader('content-security-policy', CABINET_CSP);
      },
    }),
  );
  router.get('/favicon.svg', (_req, res) => res.sendFile(path.join(cabinet.root, 'favicon.svg'), { maxAge: '1d' }));
  router.use((req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !isCabinetPage(req.path)) return next();
    sendPage(res, cabinet.index);
  });
  return router;
}

/** A page of the cabinet: its own CSP, never cached (it names the current asset hashes). */
export function sendPage(res: Response, html: string): void {
  res.setHeader('content-security-policy', CABINET_CSP);
  res.setHeader('cache-control', 'no-cache');
  res.type('html').send(html);
}

/** A browser asking for a page (not a GraphQL client posting or fetching JSON). */
export function wantsPage(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && (req.get('accept') ?? '').includes('text/html');
}
