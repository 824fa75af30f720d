import { Router, type NextFunction, type Request, type Response } from 'express';
import type { CatalogModel } from '../../src/catalog/catalog.schemas.js';
import type { Services } from '../../src/services.js';
import { DomainError } from '../../src/shared/errors.js';
import type { VideoTaskView } from '../../src/video/video.service.js';
import { sendStoredObject } from './ranges.js';
import { optionalKey, requireKey } from './auth.js';
import { sendOpenAiError } from './errors.js';
import { readJsonBody } from './inference-endpoints.js';
import { responsesRoutes } from './responses.router.js';


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

/** A fixed creation time for catalog models (the OpenAI list shape requires one). */
const CATALOG_EPOCH_SECONDS = 1_767_225_600; // 2026-01-01T00:00:00Z

type Handler = (req: Request, res: Response) => Promise<void>;

/** The inference surface. Authentication is by API key only; no cabinet session is ever read here. */
export function v1Router(services: Services): Router {
  const router = Router();
  const handle = (fn: Handler) => (req: Request, res: Response, next: NextFunction) => {
    fn(req, res).catch(next);
  };

  /** Public models, plus the ones a presented key may use; Anthropic's list shape for Anthropic-style callers. */
  router.get('/models', handle(async (req, res) => {
    const key = await optionalKey(req, services.keys);
    const models = visibleModels(services, key ? { family: key.providerFamily, group: key.routeGroup } : null);
    if (req.get('anthropic-version') && req.get('x-api-key')) {
      const data = models.map((m) => ({ type: 'model', id: m.id, display_name: m.label, created_at: new Date(CATALOG_EPOCH_SECONDS * 1000).toISOString() }));
      res.json({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
      return;
    }
    res.json({ object: 'list', data: models.map(openAiModel) });
  }));

  /** The bridge's own list: only the models served on the bridge endpoints (SPEC.md 4.6 rule 1). */
  router.get('/bridge/models', handle(async (_req, res) => {
    const models = services.catalog.snapshot.data.models.filter((m) => m.endpoints.some((e) => e.startsWith('/v1/bridge/')));
    res.json({ object: 'list', data: models.map(openAiModel) });
  }));

  router.get('/models/:model_id', handle(async (req, res) => {
    const key = await optionalKey(req, services.keys);
    const model = visibleModels(services, key ? { family: key.providerFamily, group: key.routeGroup } : null).find((m) => m.id === req.params.model_id);
    if (!model) throw new DomainError('not_found', `The model ${JSON.stringify(req.params.model_id)} does not exist`, { reason: 'model_not_found' });
    res.json(openAiModel(model));
  }));

  router.get('/me', handle(async (req, res) => {
    const status = await services.inference.keyStatus(await requireKey(req, services.keys));
    res.json({
      object: 'api_key',
      id: status.keyId,
      provider_family: status.providerFamily,
      route_group: status.routeGroup,
      pricing_plan: status.pricingPlan,
      monthly_spend_cap: status.monthlySpendCap,
      month_spend_usd: status.monthSpendUsd,
      account: { id: status.userId, username: status.username },
      balance_usd: status.balanceUsd,
      available_usd: status.availableUsd,
      can_spend: status.canSpend,
    });
  }));

  // Video jobs (SPEC.md 4.6-4.8): submit, poll, and the finished MP4 with HTTP Range support.
  router.post('/videos', handle(async (req, res) => {
    // The key is checked before the body is read, so an unauthenticated caller cannot make us read 25 MiB.
    const principal = await requireKey(req, services.keys);
    const body = await readJsonBody(req);
    try {
      const task = await services.video.submit(principal, String(res.locals.requestId ?? ''), body);
      res.status(201).location(videoPaths(task.id).poll).json({ id: task.id, status: task.status, model: task.model, seconds: task.seconds, poll_url: videoPaths(task.id).poll, content_url: videoPaths(task.id).content });
    } catch (error) {
      throw error instanceof DomainError ? error.withLocPrefix(['body']) : error;
    }
  }));
  router.get('/videos/:task_id', handle(async (req, res) => {
    const principal = await requireKey(req, services.keys);
    res.json(videoPollJson(await services.video.get(principal.userId, String(req.params.task_id))));
  }));
  // GET also answers HEAD (express), which sendStoredObject serves without a body.
  router.get('/videos/:task_id/content', handle(async (req, res) => {
    const principal = await requireKey(req, services.keys);
    const { object, task } = await services.video.content(principal.userId, String(req.params.task_id));
    await sendStoredObject(req, res, object, { etag: `"${task.id}"`, lastModified: task.completedAt ?? undefined, filename: `${task.id}.mp4` });
  }));

  // Stored Responses: GET /v1/responses/{id} (+ /input_items) and DELETE /v1/responses/{id}.
  router.use(responsesRoutes(services));

  for (const path of UNSUPPORTED) {
    router.all(path, (_req, res) => {
      sendOpenAiError(res, new DomainError('not_found', 'This endpoint is not supported by this gateway', { reason: 'unsupported_endpoint' }));
    });
  }

  router.use((_req, res) => {
    sendOpenAiError(res, new DomainError('not_found', 'Unknown endpoint', { reason: 'not_found' }));
  });
  router.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      // A stream already under way ends its own way; nothing more can be said in this response.
      if (!res.writableEnded) res.end();
      return;
    }
    if (error instanceof DomainError) return sendOpenAiError(res, error);
    next(error);
  });
  return router;
}

function visibleModels(services: Services, scope: { family: string; group: string } | null): CatalogModel[] {
  const catalog = services.catalog.snapshot;
  return catalog.data.models.filter(
    (model) => Object.keys(model.groups).some((group) => catalog.groups.get(group)?.public) || (scope !== null && catalog.allows(scope, model)),
  );
}

function videoPaths(id: string) {
  return { poll: `/v1/videos/${id}`, content: `/v1/videos/${id}/content` };
}

/** SPEC.md 4.7 poll response: id, status, content_url when completed, error when failed (plus progress and times). */
function videoPollJson(task: VideoTaskView) {
  return {
    id: task.id,
    object: 'video',
    status: task.status,
    model: task.model,
    seconds: task.seconds,
    progress: task.progress,
    created_at: Math.floor(task.createdAt.getTime() / 1000),
    completed_at: task.completedAt ? Math.floor(task.completedAt.getTime() / 1000) : null,
    ...(task.status === 'completed' ? { content_url: videoPaths(task.id).content } : {}),
    ...(task.error ? { error: task.error } : {}),
  };
}

function openAiModel(model: CatalogModel) {
  return { id: model.id, object: 'model', created: CATALOG_EPOCH_SECONDS, owned_by: 'baikal' };
}
