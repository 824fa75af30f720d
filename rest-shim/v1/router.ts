import { Router, type NextFunction, type Request, type Response } from 'express';
import type { CatalogModel } from '../../src/catalog/catalog.schemas.js';
import type { Services } from '../../src/services.js';
import { DomainError } from '../../src/shared/errors.js';
import { optionalKey } from './auth.js';
import { sendOpenAiError } from './errors.js';

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

  router.get('/models/:model_id', handle(async (req, res) => {
    const key = await optionalKey(req, services.keys);
    const model = visibleModels(services, key ? { family: key.providerFamily, group: key.routeGroup } : null).find((m) => m.id === req.params.model_id);
    if (!model) throw new DomainError('not_found', `The model ${JSON.stringify(req.params.model_id)} does not exist`, { reason: 'model_not_found' });
    res.json(openAiModel(model));
  }));

  for (const path of UNSUPPORTED) {
    router.all(path, (_req, res) => {
      sendOpenAiError(res, new DomainError('not_found', 'This endpoint is not supported by this gateway', { reason: 'unsupported_endpoint' }));
    });
  }

  router.use((_req, res) => {
    sendOpenAiError(res, new DomainError('not_found', 'Unknown endpoint', { reason: 'not_found' }));
  });
  router.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
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

function openAiModel(model: CatalogModel) {
  return { id: model.id, object: 'model', created: CATALOG_EPOCH_SECONDS, owned_by: 'baikal' };
}
