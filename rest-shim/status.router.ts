import { Router } from 'express';
import { z } from 'zod';
import type { ServiceStatusView } from '../src/status/status.service.js';
import { timestamp } from './answer-fields.js';
import { handle } from './handler.js';
import { reply, routes, serve } from './route.js';

const availability = z.enum(['active', 'unavailable']);

export const serviceStatusAnswer = z
  .object({
    generated_at: timestamp,
    groups: z.array(
      z.object({
        id: z.string(),
        label: z.string(),
        status: availability,
        uptime: z.object({ all_time: z.string(), last_24h: z.string(), last_7d: z.string(), last_30d: z.string() }).describe('Uptime percent with two decimals, e.g. "99.50"'),
        models: z.array(
          z.object({
            id: z.string(),
            label: z.string(),
            status: z.enum(['active', 'unavailable', 'checking']),
            checked_at: timestamp.nullable(),
            history: z.array(z.object({ observed_at: timestamp, status: availability })),
          }),
        ),
      }),
    ),
  })
  .meta({ id: 'ServiceStatus', description: 'SPEC.md Service status.' });

/** SPEC.md "Service status", snake_case with ISO timestamps and uptime percent strings. */
export function serviceStatusJson(view: ServiceStatusView): z.infer<typeof serviceStatusAnswer> {
  return {
    generated_at: view.generatedAt.toISOString(),
    groups: view.groups.map((group) => ({
      id: group.id,
      label: group.label,
      status: group.status,
      uptime: { all_time: group.uptime.allTime, last_24h: group.uptime.last24h, last_7d: group.uptime.last7d, last_30d: group.uptime.last30d },
      models: group.models.map((model) => ({
        id: model.id,
        label: model.label,
        status: model.status,
        checked_at: model.checkedAt?.toISOString() ?? null,
        history: model.history.map((point) => ({ observed_at: point.observedAt.toISOString(), status: point.status })),
      })),
    })),
  };
}

/** SPEC.md 4.3 `GET /catalog/status`: public, no sign-in. Mounted before the catalog router. */
export const STATUS_ROUTES = routes('/catalog', 'catalog', {
  status: { method: 'get', at: '/status', summary: 'Service status: route groups and models, with uptime and history', access: 'public', answers: { 200: { description: 'Service status', json: serviceStatusAnswer } } },
});

export function statusRouter(): Router {
  const router = Router();
  serve(router, STATUS_ROUTES.status, handle(async (ctx, _req, res) => {
    reply(res, STATUS_ROUTES.status, 200, serviceStatusJson(await ctx.services.status.get()));
  }));
  return router;
}
