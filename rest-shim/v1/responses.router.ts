import { Router, type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import type { Services } from '../../src/services.js';
import { DomainError } from '../../src/shared/errors.js';
import { intParam, parseInput } from '../../src/shared/validation.js';
import { requireKeyShowingWindow } from './auth.js';
import { sendOpenAiError } from './errors.js';

/** `GET /v1/responses/{id}/input_items` query (OpenAI's paging); other parameters (e.g. `include`) are ignored. */
export const inputItemsQuery = z.looseObject({
  limit: intParam(1, 100, 20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: z.string().min(1).max(256).optional(),
});

type Handler = (req: Request, res: Response) => Promise<void>;

function notFound(id: string): DomainError {
  return new DomainError('not_found', `No response with id ${JSON.stringify(id)}`, { reason: 'response_not_found' });
}

/**
 * Stored Responses: read, list the input items of, and delete a response made with `store: true`.
 * Authenticated by API key like every /v1 route (their answers show the key's window; nothing is counted); a
 * response of another account is the same 404 as an unknown one, so ids cannot be probed. Mounted on /v1 (paths are relative).
 */
export function responsesRoutes(services: Services): Router {
  const router = Router();
  const handle = (fn: Handler) => (req: Request, res: Response, next: NextFunction) => {
    fn(req, res).catch(next);
  };

  router.get('/responses/:id', handle(async (req, res) => {
    const principal = await requireKeyShowingWindow(req, res, services);
    const id = String(req.params.id);
    const response = await services.responses.get(principal.userId, id);
    if (!response) throw notFound(id);
    res.json(response);
  }));

  router.get('/responses/:id/input_items', handle(async (req, res) => {
    const principal = await requireKeyShowingWindow(req, res, services);
    const id = String(req.params.id);
    try {
      const query = parseInput(inputItemsQuery, req.query);
      const page = await services.responses.inputItems(principal.userId, id, { limit: query.limit, order: query.order, after: query.after });
      if (!page) throw notFound(id);
      res.json(page);
    } catch (error) {
      throw error instanceof DomainError ? error.withLocPrefix(['query']) : error;
    }
  }));

  router.delete('/responses/:id', handle(async (req, res) => {
    const principal = await requireKeyShowingWindow(req, res, services);
    const id = String(req.params.id);
    if (!(await services.responses.delete(principal.userId, id))) throw notFound(id);
    res.json({ id, object: 'response', deleted: true });
  }));

  // Errors of these routes answer here in the OpenAI shape, wherever the router is mounted.
  router.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    if (error instanceof DomainError) return sendOpenAiError(res, error);
    next(error);
  });
  return router;
}
