import { Router } from 'express';
import type { ServiceStatusView } from '../src/status/status.service.js';
import { handle } from './handler.js';

/** SPEC.md "Service status", snake_case with ISO timestamps and uptime percent strings. */
export function serviceStatusJson(view: ServiceStatusView) {
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
export function statusRouter(): Router {
  const router = Router();
  router.get('/status', handle(async (ctx, _req, res) => {
    res.json(serviceStatusJson(await ctx.services.status.get()));
  }));
  return router;
}
