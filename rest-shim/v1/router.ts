import { Router, type NextFunction, type Request, type Response } from 'express';
import type { CatalogModel } from '../../src/catalog/catalog.schemas.js';
import type { KeyPrincipal } from '../../src/keys/keys.service.js';
import type { Services } from '../../src/services.js';
import { MESSAGES_ERRORS } from '../../src/inference/formats/anthropic-messages/errors.js';
import type { ErrorShape } from '../../src/inference/formats/client-format.js';
import { DomainError } from '../../src/shared/errors.js';
import { sendVideoContent } from '../videos.router.js';
import { keyStatusJson, videoCreatedJson, videoPaths, videoPollJson } from './answers.js';
import { optionalKey, requireKeyShowingWindow, requireMessagesKey } from './auth.js';
import { errorShapeOfPath, sendError, sendOpenAiError } from './errors.js';
import { writePeekedWindow } from './limit-headers.js';
import { anthropicList, anthropicModel, openAiModel, visibleModels, wantsAnthropicShape } from './models.js';
import { readJsonBody } from './inference-endpoints.js';
import { responsesRoutes } from './responses.router.js';
import { readJsonOrForm, videoBodyFromForm } from './multipart.js';


/** SPEC.md section 1: endpoints the gateway deliberately does not offer. */
const UNSUPPORTED = [
  '/completions',
  '/embeddings',
  '/rerank',
  '/moderations',
  '/audio',
  '/audio/*rest',
  '/realtime',
  '/realtime/*rest',
];

type Handler = (req: Request, res: Response) => Promise<void>;

/** The inference surface. Authentication is by API key only; no cabinet session is ever read here. */
export function v1Router(services: Services): Router {
  const router = Router();
  router.use(modelRoutes(services));
  router.post('/messages/count_tokens', handle(countTokens(services)));
  router.get('/me', handle(async (req, res) => {
    res.json(keyStatusJson(await services.keyStatus.of(await requireKeyShowingWindow(req, res, services))));
  }));
  router.use(videoRoutes(services));
  // Stored Responses: GET /v1/responses/{id} (+ /input_items) and DELETE /v1/responses/{id}.
  router.use(responsesRoutes(services));

  for (const path of UNSUPPORTED) {
    router.all(path, (_req, res) => {
      sendOpenAiError(res, new DomainError('not_found', 'This endpoint is not supported by this gateway', { reason: 'unsupported_endpoint' }));
    });
  }
  router.use((req, res) => {
    sendError(res, errorShapeOf(req), new DomainError('not_found', 'Unknown endpoint', { reason: 'not_found' }));
  });
  router.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      // A stream already under way ends its own way; nothing more can be said in this response.
      if (!res.writableEnded) res.end();
      return;
    }
    if (error instanceof DomainError) return sendError(res, errorShapeOf(req), error);
    next(error);
  });
  return router;
}

function handle(fn: Handler) {
  return (req: Request, res: Response, next: NextFunction) => {
    fn(req, res).catch(next);
  };
}

/**
 * Public models (plus the ones a presented key may use) with their groups and prices: OpenAI's list
 * shape, or Anthropic's (paginated) for Anthropic-style callers. The bridge lists only its own models.
 */
function modelRoutes(services: Services): Router {
  const router = Router();
  const listModels = (only?: (model: CatalogModel) => boolean): Handler => async (req, res) => {
    const key = await optionalKeyShowingWindow(req, res, services);
    const catalog = services.catalog.snapshot;
    const models = visibleModels(catalog, key, only);
    if (wantsAnthropicShape(req)) return void res.json(anthropicList(catalog, models, key, req.query as Record<string, unknown>));
    res.json({ object: 'list', data: models.map((model) => openAiModel(catalog, model, key)) });
  };
  const getModel = (only?: (model: CatalogModel) => boolean): Handler => async (req, res) => {
    const key = await optionalKeyShowingWindow(req, res, services);
    const catalog = services.catalog.snapshot;
    const model = visibleModels(catalog, key, only).find((m) => m.id === req.params.model_id);
    if (!model) throw new DomainError('not_found', `The model ${JSON.stringify(req.params.model_id)} does not exist`, { reason: 'model_not_found' });
    res.json(wantsAnthropicShape(req) ? anthropicModel(catalog, model, key) : openAiModel(catalog, model, key));
  };
  // SPEC.md 4.6 rule 1: the bridge's list holds only the models served on the bridge endpoints.
  const onBridge = (model: CatalogModel) => model.endpoints.some((e) => e.startsWith('/v1/bridge/'));
  router.get('/models', handle(listModels()));
  router.get('/models/:model_id', handle(getModel()));
  router.get('/bridge/models', handle(listModels(onBridge)));
  router.get('/bridge/models/:model_id', handle(getModel(onBridge)));
  return router;
}

/** The model lists' optional key; a presented one sees its window (as it stands) in its answer's style. */
async function optionalKeyShowingWindow(req: Request, res: Response, services: Services): Promise<KeyPrincipal | null> {
  const key = await optionalKey(req, services.keys);
  if (key) await writePeekedWindow(res, errorShapeOf(req).rateLimitHeaders, services.limiter, key);
  return key;
}

/**
 * Anthropic's token counting: authenticated and scoped like /v1/messages (x-api-key and
 * anthropic-version; the key checked before the body is read), never billed.
 */
function countTokens(services: Services): Handler {
  return async (req, res) => {
    const principal = await requireMessagesKey(req, services.keys);
    // Every answer past the key shows its window, looked at once the count is done: a forwarded count took its
    // place in it (a 429 carries the limiter's own figures instead).
    const showWindow = () => writePeekedWindow(res, 'anthropic', services.limiter, principal);
    let answer: { input_tokens: number };
    try {
      answer = await countFor(services, principal, req, res);
    } catch (error) {
      await showWindow();
      throw error;
    }
    await showWindow();
    res.json(answer);
  };
}

/** The count of a Messages request's body; its validation errors name `body`. */
async function countFor(services: Services, principal: KeyPrincipal, req: Request, res: Response): Promise<{ input_tokens: number }> {
  const body = await readJsonBody(req);
  // A client that goes away stops the upstream call.
  const cancel = new AbortController();
  res.on('close', () => cancel.abort());
  const anthropicBeta = req.get('anthropic-beta');
  try {
    return await services.countTokens.count(principal, body, { signal: cancel.signal, ...(anthropicBeta ? { anthropicBeta } : {}) });
  } catch (error) {
    throw error instanceof DomainError ? error.withLocPrefix(['body']) : error;
  }
}

/** Video jobs (SPEC.md 4.6-4.8): submit, poll, and the finished MP4 with HTTP Range support. */
function videoRoutes(services: Services): Router {
  const router = Router();
  router.post('/videos', handle(async (req, res) => {
    // The key is checked before the body is read, so an unauthenticated caller cannot make us read 25 MiB. A
    // submission is held by the account's balance, not counted against the key's request limits; its answer (an
    // unreadable body's too) still says where the key stands.
    const principal = await requireKeyShowingWindow(req, res, services);
    // JSON, or multipart/form-data as the official OpenAI client sends it (fields plus an input_reference file).
    const read = await readJsonOrForm(req);
    try {
      const body = read.kind === 'form' ? videoBodyFromForm(read.body) : read.body;
      const task = await services.video.submit(principal, String(res.locals.requestId ?? ''), body);
      res.status(201).location(videoPaths(task.id).poll).json(videoCreatedJson(task));
    } catch (error) {
      throw error instanceof DomainError ? error.withLocPrefix(['body']) : error;
    }
  }));
  router.get('/videos/:task_id', handle(async (req, res) => {
    const principal = await requireKeyShowingWindow(req, res, services);
    res.json(videoPollJson(await services.video.get(principal.userId, String(req.params.task_id))));
  }));
  // GET also answers HEAD (express), which sendVideoContent serves without a body.
  router.get('/videos/:task_id/content', handle(async (req, res) => {
    const principal = await requireKeyShowingWindow(req, res, services);
    await sendVideoContent(services, principal.userId, String(req.params.task_id), req, res);
  }));
  return router;
}

/**
 * Every error of a client format's surface is in its shape, 404s included: its endpoints and anything
 * below them (an unknown sub-path, a GET). The model list and model lookups answer in Anthropic's shape
 * when asked in it; everything else under /v1 in OpenAI's.
 */
function errorShapeOf(req: Request): ErrorShape {
  const path = req.path.toLowerCase();
  if (/^\/(bridge\/)?models(\/|$)/.test(path) && wantsAnthropicShape(req)) return MESSAGES_ERRORS;
  return errorShapeOfPath(`/v1${path}`);
}
