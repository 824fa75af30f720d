import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type NextFunction, type Request, type Response } from 'express';
import { GraphQLError } from 'graphql';
import { formatGraphQLError } from '../resolvers/errors.js';
import { graphqlValidationRules, operationCostError } from '../resolvers/limits.js';
import { buildGraphQLSchema } from '../resolvers/schema.js';
import { cabinetRouter, checkoutWebhook, errorHandler, healthRouter } from '../rest-shim/index.js';
import { messengerWebhook } from '../rest-shim/auth.router.js';
import { v1Router } from '../rest-shim/v1/router.js';
import { apiCors } from '../rest-shim/v1/cors.js';
import { inferenceEndpoints } from '../rest-shim/v1/inference-endpoints.js';
import { logRequest } from '../rest-shim/request-log.js';
import { openApiRouter } from '../rest-shim/openapi/router.js';
import { cabinetPages, loadCabinet, sendPage, wantsPage } from './cabinet.js';
import type { Config } from './config.js';
import { serveGraphqlWs } from './graphql-ws.js';
import {
  createRequestContext,
  resolveHttpActor,
  sessionCookieName,
  type RequestContext,
  type SessionCookie,
} from './context.js';
import { requireMigrated, type Readiness } from './readiness.js';
import type { Services } from './services.js';
import { DomainError, StartupError } from './shared/errors.js';
import { constantTimeEqual } from './shared/ids.js';
import { assertJsonDepth, jsonNestsDeeper, tooDeepError } from './shared/json-depth.js';
import { requestScope, type Logger } from './shared/logging.js';
import type { PubSub } from './shared/pubsub.js';
import { appRouter } from './trpc/router.js';

export interface GatewayDeps {
  config: Config;
  orm: MikroORM;
  log: Logger;
  pubsub: PubSub;
  services: Services;
  readiness: Readiness;
}

export interface Gateway {
  server: Server;
  listen(port: number, host: string): Promise<AddressInfo>;
  /** Stops accepting, drains in-flight requests (up to the grace period), closes websockets. */
  close(): Promise<void>;
}

/** A failure to listen that the operator fixes (the port taken, not ours to bind, an address the host lacks), said as such. */
function listenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  const where = `${host}:${port}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new StartupError(`cannot listen on ${where}: the port is already in use (another gateway?); stop what holds it, or set PORT`);
    case 'EACCES':
      return new StartupError(`cannot listen on ${where}: permission denied (ports below 1024 need privileges); set PORT`);
    case 'EADDRNOTAVAIL':
      return new StartupError(`cannot listen on ${where}: this machine has no such address; set HOST`);
    default:
      return error;
  }
}

/** Largest cabinet request body (SPEC.md section 8: normal request body 25 MiB). */
const BODY_LIMIT = '25mb';

export async function createGateway(deps: GatewayDeps): Promise<Gateway> {
  const { config, log, services, readiness } = deps;
  const app = express();
  const server = createHttpServer(config, inferenceEndpoints(services, readiness, log, config.streamWriteTimeoutMs), app);
  const production = config.nodeEnv === 'production';

  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy ?? false);
  app.use(requestLogging(log));
  app.use(securityHeaders(config));
  app.use(healthRouter(readiness, new Date()));
  const cabinet = loadCabinet();
  app.use(cabinetPages(cabinet));
  app.get('/metrics', metricsEndpoint(config.metricsToken, services));

  // GraphQL over HTTP and over graphql-ws share one schema.
  const schema = await buildGraphQLSchema(deps.pubsub);
  const formatError = formatGraphQLError(log);
  const validationRules = graphqlValidationRules(production);
  const graphqlWs = serveGraphqlWs({ server, schema, validationRules, formatError, limits: config.websocket, publicHttps: config.publicHttps, services, pubsub: deps.pubsub, orm: deps.orm, log, clientAddressOf: (request) => clientAddressOf(app, request) });
  const apollo = new ApolloServer<RequestContext>({
    schema,
    formatError,
    includeStacktraceInErrorResponses: false,
    introspection: !production,
    validationRules,
    // One operation per HTTP request: a batch would multiply the work behind one request's limits.
    allowBatchedHttpRequests: false,
    plugins: apolloPlugins(server, config.shutdownGraceMs, () => graphqlWs.dispose()),
  });
  await apollo.start();

  const json = jsonBodies();
  const withContext = requestContexts(config, services, log);
  app.use(['/graphql', '/trpc', '/auth', '/keys', '/catalog', '/usage', '/leaderboard', '/announcements', '/payments', '/videos', '/orgs', '/v1'], requireMigrated(readiness));
  app.use('/v1', v1Router(services));
  // A browser opening /graphql where introspection is on gets the bundled GraphiQL (same origin, same cookie).
  app.get('/graphql', (req, res, next) => (wantsPage(req) && !production && cabinet?.graphiql ? sendPage(res, cabinet.graphiql) : next()));
  // The interface description (GET /openapi.json) and its bundled reference page (GET /docs/api).
  app.use(openApiRouter(sessionCookieName(config.publicHttps)));
  app.use('/graphql', json, withContext, expressMiddleware(apollo, { context: async ({ res }) => res.locals.ctx as RequestContext }));
  app.use('/trpc', json, withContext, neutralHost, createExpressMiddleware({ router: appRouter, createContext: ({ res }) => res.locals.ctx as RequestContext }));
  // The checkout webhook is signed over its raw bytes: it must see the body before any JSON parser.
  app.post('/payments/webhooks/checkout', express.raw({ type: () => true, limit: '1mb' }), rawJsonDepth, checkoutWebhook(services));
  // The messenger bot's webhook, likewise signed over its raw bytes.
  app.post('/auth/messenger/webhook', express.raw({ type: () => true, limit: '64kb' }), rawJsonDepth, messengerWebhook(services));
  app.use(json, withContext, cabinetRouter());
  app.use((_req, res) => {
    res.status(404).json({ detail: 'Not found', code: 'not_found' });
  });
  app.use(errorHandler(log));

  return gatewayHandle(server, () => apollo.stop(), { readiness, services, graceMs: config.shutdownGraceMs });
}

/**
 * The HTTP server: the inference POSTs go straight to their handler, bypassing express (the hot path's main
 * speed decision); everything else goes to `app`. Bounded in time against slow clients, and answering in our
 * error shape what node's parser refuses.
 */
function createHttpServer(config: Config, inference: (req: IncomingMessage, res: ServerResponse) => boolean, app: express.Express): Server {
  // node enforces the two timeouts below on a timer: every second, so a slow client is cut close to its bound.
  const server = createServer({ connectionsCheckingInterval: 1_000 }, (req, res) => {
    // Every answer is data, never something a browser should sniff into a script or a page.
    res.setHeader('x-content-type-options', 'nosniff');
    if (apiCors(req, res)) return;
    if (!inference(req, res)) app(req, res);
  });
  // Slow-loris protection: a client must send its headers, and its whole request, in bounded time.
  server.headersTimeout = config.httpTimeouts.headersMs;
  server.requestTimeout = config.httpTimeouts.requestMs;
  server.keepAliveTimeout = 65_000;
  // Requests node's parser refuses before any route sees them (oversized headers, malformed HTTP, timeouts)
  // still get an answer in our error shape rather than a bare status line.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') return void socket.destroy();
    const [status, detail, code] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request headers (or the URL) are too large', 'payload_too_large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'The request was not received in time', 'request_timeout']
          : [400, 'Malformed HTTP request', 'bad_request'];
    const body = JSON.stringify({ detail, code });
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`);
  });
  return server;
}

/** Prometheus metrics carry operator-only labels (upstream ids): the operator's token, or nothing. */
function metricsEndpoint(token: string | undefined, services: Services) {
  return async (req: Request, res: Response) => {
    if (!token) return void res.status(404).json({ detail: 'Not found', code: 'not_found' });
    const given = /^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1];
    if (!given || !constantTimeEqual(given, token)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return void res.status(401).json({ detail: 'The operator metrics token is required', code: 'unauthenticated' });
    }
    res.setHeader('content-type', services.metrics.registry.contentType);
    res.send(await services.metrics.scrape());
  };
}

/** Apollo's plugins: draining with the server, the websockets closed with it, and each operation's cost checked. */
function apolloPlugins(server: Server, graceMs: number, disposeWebsockets: () => Promise<void>): ApolloServerPlugin<RequestContext>[] {
  return [
    ApolloServerPluginDrainHttpServer({ httpServer: server, stopGracePeriodMillis: graceMs }),
    // Apollo's landing page loads its explorer from a CDN; the bundled GraphiQL works offline.
    ApolloServerPluginLandingPageDisabled(),
    { serverWillStart: async () => ({ drainServer: disposeWebsockets }) },
    // Cost needs the variables (a list's `limit` is often one): checked once the operation is known, before it runs.
    {
      requestDidStart: async () => ({
        didResolveOperation: async ({ schema: operationSchema, document, operation, request }) => {
          const error = operation && operationCostError(operationSchema, document, operation, request.variables);
          if (error) throw new GraphQLError(error.message, { nodes: error.nodes, extensions: { ...error.extensions, http: { status: 400 } } });
        },
      }),
    },
  ];
}

/** Who is calling, for GraphQL, tRPC and the REST shim: `res.locals.ctx`, built once per request. */
function requestContexts(config: Config, services: Services, log: Logger) {
  const buildContext = async (req: Request, res: Response): Promise<RequestContext> =>
    createRequestContext(services, {
      requestId: res.locals.requestId as string,
      log,
      ...(await resolveHttpActor(req, config.publicHttps, services)),
      caller: { clientAddress: req.ip ?? null, userAgent: req.get('user-agent') ?? null, origin: requestOrigin(req) },
      sessionCookie: httpSessionCookie(res, config),
    });
  return (req: Request, res: Response, next: NextFunction) => {
    buildContext(req, res).then((ctx) => {
      res.locals.ctx = ctx;
      next();
    }, next);
  };
}

/** The request's own origin (`trust proxy` decides whether forwarded headers count); none without a Host. */
function requestOrigin(req: Request): string | null {
  return req.host ? `${req.protocol}://${req.host}` : null;
}

/**
 * JSON bodies: nested past MAX_JSON_DEPTH they are refused before they are parsed (422 with the location), and
 * text holding NUL (which PostgreSQL text cannot hold) is refused where it arrives, with its location.
 */
function jsonBodies() {
  const parseJson = express.json({ limit: BODY_LIMIT, strict: false, verify: (_req, _res, bytes) => assertJsonDepth(bytes) });
  return (req: Request, res: Response, next: NextFunction) =>
    parseJson(req, res, (error?: unknown) => {
      if (error) return next(error);
      const found = nulLocation(req.body, ['body']) ?? nulLocation(req.query, ['query']);
      if (!found) return next();
      next(new DomainError('validation_failed', 'Text may not contain NUL characters', { issues: [{ loc: found, msg: 'Input should not contain NUL (\\u0000) characters', type: 'string_nul' }] }));
    });
}

/** The same nesting bound for a raw body (the signed webhooks read their bytes themselves). */
function rawJsonDepth(req: Request, _res: Response, next: NextFunction): void {
  if (Buffer.isBuffer(req.body) && jsonNestsDeeper(req.body)) return next(tooDeepError(req.body));
  next();
}

/**
 * tRPC's adapter makes a fetch Request of `http://<Host><url>`: an empty Host made it a 400, a Host with userinfo
 * (`a:b@c`) a 500. It reads only the path and query; the context (and its CSRF check on the real Host) is built first.
 */
function neutralHost(req: Request, _res: Response, next: NextFunction): void {
  req.headers.host = 'localhost';
  next();
}

/** Listening, and closing: draining first, with running streams ended a second before the grace period does. */
function gatewayHandle(server: Server, stopApollo: () => Promise<void>, deps: { readiness: Readiness; services: Services; graceMs: number }): Gateway {
  return {
    server,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, port, host));
        server.once('error', failed);
        server.listen(port, host, () => {
          server.off('error', failed);
          resolve(server.address() as AddressInfo);
        });
      }),
    close: async () => {
      deps.readiness.draining = true;
      // Apollo's drain closes every connection when the grace period ends; a second before that, running
      // requests are stopped so that streams end with a final error event instead of a cut.
      const stopRunning = setTimeout(() => deps.services.inference.stopRunning(), Math.max(0, deps.graceMs - 1_000));
      try {
        await stopApollo();
      } finally {
        clearTimeout(stopRunning);
      }
    },
  };
}

/** Where the first text holding a NUL character sits in a parsed body or query, if any (bounded depth). */
function nulLocation(value: unknown, loc: (string | number)[], depth = 0): (string | number)[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? loc : null;
  if (value === null || typeof value !== 'object' || depth > 32) return null;
  for (const [key, item] of Object.entries(value)) {
    if (key.includes('\u0000')) return [...loc, key];
    const found = nulLocation(item, [...loc, Array.isArray(value) ? Number(key) : key], depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * The browser-facing rules for the API: nothing may frame, embed or run what it answers, no referrer
 * leaves with a link, and nothing is cached (answers carry keys, balances and sessions). HSTS only
 * where the operator says the public address is HTTPS. The cabinet's pages replace the CSP with their
 * own (src/cabinet.ts).
 */
function securityHeaders(config: Config) {
  const headers: [string, string][] = [
    ['x-frame-options', 'DENY'],
    ['referrer-policy', 'no-referrer'],
    ['cross-origin-opener-policy', 'same-origin'],
    ['cross-origin-resource-policy', 'same-origin'],
    ['cache-control', 'no-store'],
    ...(config.publicHttps ? [['strict-transport-security', 'max-age=31536000; includeSubDomains'] as [string, string]] : []),
  ];
  return (_req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    res.setHeader('content-security-policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    next();
  };
}

function requestLogging(log: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const requestId = logRequest(log, req, res);
    res.locals.requestId = requestId;
    requestScope.run({ requestId }, next);
  };
}

function httpSessionCookie(res: Response, config: Config): SessionCookie {
  const name = sessionCookieName(config.publicHttps);
  const options = { httpOnly: true, sameSite: 'lax' as const, secure: config.publicHttps, path: '/' };
  return {
    set: (token, expiresAt) => {
      res.cookie(name, token, { ...options, expires: expiresAt });
    },
    clear: () => {
      res.clearCookie(name, options);
    },
  };
}

/** A request's client address as express computes it for `req.ip` (honouring `trust proxy`), for requests express never saw (websocket upgrades). */
function clientAddressOf(app: express.Express, request: IncomingMessage): string {
  const view = Object.create(app.request) as Request;
  Object.assign(view, { app, headers: request.headers, socket: request.socket, connection: request.socket });
  return view.ip ?? request.socket.remoteAddress ?? 'unknown';
}
