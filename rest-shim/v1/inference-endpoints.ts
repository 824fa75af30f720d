import type { IncomingMessage, ServerResponse } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Endpoint } from '../../src/catalog/catalog.schemas.js';
import { FORMAT_OF_ENDPOINT } from '../../src/inference/client-formats.js';
import type { ErrorShape } from '../../src/inference/formats/client-format.js';
import type { InferenceCall, ResponseSink } from '../../src/inference/inference-call.js';
import { LimitRefusal } from '../../src/inference/limits.js';
import type { KeyPrincipal, KeysService } from '../../src/keys/keys.service.js';
import { notServing, type Readiness } from '../../src/readiness.js';
import type { Services } from '../../src/services.js';
import { DomainError } from '../../src/shared/errors.js';
import { assertJsonDepth } from '../../src/shared/json-depth.js';
import { requestScope, type Logger } from '../../src/shared/logging.js';
import { logRequest } from '../request-log.js';
import { requireKey, requireMessagesKey, headerOf } from './auth.js';
import { errorShapeOfPath, sendError, sendJson } from './errors.js';
import { hasWindow, writeWindow } from './limit-headers.js';
import { responseSink } from './sink.js';

/** SPEC.md section 8: the normal request body limit. */
export const V1_BODY_LIMIT_BYTES = 25 * 1024 * 1024;

type Run = (services: Services, call: InferenceCall, body: unknown, sink: ResponseSink) => Promise<void>;

/** An endpoint of a client format: its requests go through the text pipeline in that format. */
function complete(endpoint: Endpoint): Run {
  const format = FORMAT_OF_ENDPOINT[endpoint]!;
  return (services, call, body, sink) => services.inference.complete(call, format, body, sink);
}

/** How an endpoint's clients present their key, and what else of their request the pipeline takes besides the body. */
interface Clients {
  /** Checks the key before the body is read, so an unauthenticated caller cannot make us read 25 MiB. */
  authenticate(req: IncomingMessage, keys: KeysService): Promise<KeyPrincipal>;
  /** Request headers the pipeline forwards to an upstream speaking the client's format (checked here). */
  forwarded(req: IncomingMessage): Pick<InferenceCall, 'anthropicBeta'>;
}

const NOTHING_FORWARDED = {};

/** OpenAI's clients: `Authorization: Bearer`. */
const OPENAI_CLIENTS: Clients = { authenticate: requireKey, forwarded: () => NOTHING_FORWARDED };

/** Anthropic's clients: `x-api-key` and `anthropic-version`; their beta flags reach an Anthropic upstream. */
const ANTHROPIC_CLIENTS: Clients = {
  authenticate: requireMessagesKey,
  forwarded(req) {
    const anthropicBeta = betaFlagsOf(req);
    return anthropicBeta ? { anthropicBeta } : NOTHING_FORWARDED;
  },
};

interface InferenceRoute {
  endpoint: Endpoint;
  clientSurface: 'api' | 'bridge';
  run: Run;
  clients: Clients;
  /** Errors in the shape this endpoint's clients read (its client format's). */
  errors: ErrorShape;
}

const generateImage: Run = (services, call, body, sink) => services.inference.generateImage(call, body, sink);

/** The inference endpoints: every POST that is forwarded to a model. */
const INFERENCE = new Map<string, InferenceRoute>(
  (
    [
      ['/v1/chat/completions', 'api', complete('/v1/chat/completions'), OPENAI_CLIENTS],
      ['/v1/responses', 'api', complete('/v1/responses'), OPENAI_CLIENTS],
      ['/v1/messages', 'api', complete('/v1/messages'), ANTHROPIC_CLIENTS],
      ['/v1/bridge/chat/completions', 'bridge', complete('/v1/bridge/chat/completions'), OPENAI_CLIENTS],
      ['/v1/bridge/responses', 'bridge', complete('/v1/bridge/responses'), OPENAI_CLIENTS],
      ['/v1/images/generations', 'api', generateImage, OPENAI_CLIENTS],
    ] as const
  ).map(([endpoint, clientSurface, run, clients]) => [endpoint, { endpoint, clientSurface, run, clients, errors: errorShapeOfPath(endpoint) }]),
);

/**
 * The /v1 inference hot path on plain node:http, ahead of express: the same rules as the rest of /v1
 * (key first, then the body; our error shapes), without a router walk, body-parser, ETag hashing or
 * the other middleware a per-request budget of a few hundred microseconds cannot afford. Returns
 * false for any other request, which express then serves.
 */
export function inferenceEndpoints(services: Services, readiness: Readiness, log: Logger, writeTimeoutMs: number): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const route = INFERENCE.get(routePath(req.url ?? ''));
    if (!route) return false;
    const requestId = logRequest(log, req, res);
    requestScope.run({ requestId }, () => {
      const refusal = notServing(readiness);
      if (refusal) {
        for (const [name, value] of Object.entries(refusal.headers)) res.setHeader(name, value);
        return sendJson(res, refusal.status, route.errors.unavailable(refusal.body.detail, refusal.body.code));
      }
      let body: unknown;
      let sink: ResponseSink | undefined;
      let principal: KeyPrincipal | undefined;
      const started = performance.now();
      const serve = async () => {
        principal = await route.clients.authenticate(req, services.keys);
        body = await readJsonBody(req);
        sink = responseSink(req, res, writeTimeoutMs, route.errors.rateLimitHeaders);
        try {
          const forwarded = route.clients.forwarded(req);
          await route.run(services, { principal, requestId, endpoint: route.endpoint, clientSurface: route.clientSurface, ...forwarded }, body, sink);
        } catch (error) {
          throw error instanceof DomainError ? error.withLocPrefix(['body']) : error;
        }
      };
      serve()
        .catch((error: unknown) => {
          if (res.headersSent) {
            // A stream already under way ends its own way; nothing more can be said in this response.
            if (!res.writableEnded) res.end();
            return;
          }
          // A refused body is left unread: node discards the rest (within the request timeout), so the client still reads our answer.
          if (error instanceof DomainError) return refuse(services, res, route.errors, principal, error);
          log.error({ err: error, path: route.endpoint }, 'unhandled error');
          sendJson(res, 500, route.errors.internal());
        })
        .finally(() => {
          // Only catalog models become label values, so a client cannot grow the metric set.
          const model = (body as { model?: unknown } | undefined)?.model;
          if (sink?.firstByteAt !== undefined && typeof model === 'string' && services.catalog.snapshot.models.has(model)) {
            services.metrics.observeFirstByte(route.endpoint, model, sink.firstByteAt - started);
          }
        });
    });
    return true;
  };
}

/**
 * A refusal; one of a known key that never reached the limits (a 4xx of validation, scope or balance)
 * still says where the key's window stands, at the cost of a look at the limiter on that error path only.
 */
async function refuse(services: Services, res: ServerResponse, shape: ErrorShape, principal: KeyPrincipal | undefined, error: DomainError): Promise<void> {
  if (principal && !(error instanceof LimitRefusal) && !hasWindow(res, shape.rateLimitHeaders)) {
    try {
      writeWindow(res, shape.rateLimitHeaders, await services.limiter.peek(principal));
    } catch {
      // Redis could not say: the refusal goes out without the figures.
    }
  }
  sendError(res, shape, error);
}

/** Anthropic beta flags: a comma-separated list of names such as `interleaved-thinking-2025-05-14`. */
const BETA_FLAGS = /^[A-Za-z0-9._-]+(\s*,\s*[A-Za-z0-9._-]+)*$/;

/** The client's `anthropic-beta` header for an Anthropic upstream; 400 when it is not a list of flag names. */
function betaFlagsOf(req: IncomingMessage): string | undefined {
  const values = req.headers['anthropic-beta'];
  const flags = (Array.isArray(values) ? values.join(',') : values)?.trim();
  if (!flags) return undefined;
  if (!BETA_FLAGS.test(flags)) throw new DomainError('bad_request', 'The anthropic-beta header must be a comma-separated list of beta names', { reason: 'invalid_beta_header' });
  return flags;
}

/** An absolute-form request target's scheme and authority (RFC 9112 3.2.2: servers must accept the form). */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * The path express would route: no query, case-insensitive, one trailing slash ignored; for an
 * absolute-form target (`POST http://host/v1/chat/completions`), its path, as express reads it too.
 */
function routePath(url: string): string {
  if (!url.startsWith('/')) url = url.replace(ABSOLUTE_FORM, '');
  const query = url.indexOf('?');
  let path = query === -1 ? url : url.slice(0, query);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return INFERENCE.has(path) ? path : path.toLowerCase();
}

const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate, br: createBrotliDecompress };

/**
 * The request body as JSON, read up to the body limit (after decompression). As express.json did:
 * only an `application/json` body is parsed (anything else reads as no body), an empty body is `{}`,
 * and malformed JSON is a 422 in SPEC.md's shape.
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const type = headerOf(req, 'content-type')?.toLowerCase() ?? '';
  if (type.split(';', 1)[0]!.trim() !== 'application/json') return undefined;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/.exec(type)?.[1];
  if (charset && !charset.startsWith('utf-')) throw new DomainError('bad_request', `Unsupported charset ${JSON.stringify(charset)}; send UTF-8`, { reason: 'unsupported_charset' });
  const tooLarge = () => new DomainError('payload_too_large', `Request body is larger than ${V1_BODY_LIMIT_BYTES / 1024 / 1024} MiB`, { reason: 'payload_too_large' });
  if (Number(headerOf(req, 'content-length') ?? 0) > V1_BODY_LIMIT_BYTES) throw tooLarge();

  const encoding = headerOf(req, 'content-encoding')?.trim().toLowerCase() ?? 'identity';
  let source: NodeJS.ReadableStream = req;
  if (encoding !== 'identity') {
    const decoder = DECODERS[encoding];
    if (!decoder) throw new DomainError('bad_request', `Unsupported content encoding ${JSON.stringify(encoding)}`, { reason: 'unsupported_content_encoding' });
    source = req.pipe(decoder());
  }
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (error: DomainError) => {
      source.removeAllListeners('data');
      if (source !== req) req.unpipe();
      reject(error);
    };
    source.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > V1_BODY_LIMIT_BYTES) return fail(tooLarge());
      chunks.push(chunk);
    });
    source.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    source.on('error', () => fail(new DomainError('bad_request', 'The request body could not be read', { reason: 'unreadable_body' })));
    req.on('aborted', () => fail(new DomainError('bad_request', 'The request body could not be read', { reason: 'unreadable_body' })));
  });
  const text = bytes.toString('utf8');
  if (text.trim() === '') return {};
  assertJsonDepth(bytes);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new DomainError('validation_failed', 'Request validation failed', { issues: [{ loc: ['body'], msg: `JSON decode error: ${(error as Error).message}`, type: 'json_invalid' }] });
  }
}
