import { Router } from 'express';
import type { Readiness } from '../src/readiness.js';

export const SERVICE_VERSION = '1.0.0';

/** SPEC.md 4.5: /status, /health, /live (string values only) and /ready (503 until ready and once draining). */
export function healthRouter(readiness: Readiness, startedAt: Date): Router {
  const router = Router();

  router.get('/live', (_req, res) => {
    res.json({ status: 'ok' });
  });

  router.get('/health', (_req, res) => {
    res.json({ status: 'ok', service: 'baikal', version: SERVICE_VERSION });
  });

  router.get('/status', (_req, res) => {
    res.json({
      status: readiness.draining ? 'draining' : readiness.migrated ? 'ok' : 'starting',
      service: 'baikal',
      version: SERVICE_VERSION,
      started_at: startedAt.toISOString(),
      uptime_seconds: String(Math.floor((Date.now() - startedAt.getTime()) / 1000)),
    });
  });

  router.get('/ready', async (_req, res) => {
    const report = await readiness.check();
    res.status(report.ready ? 200 : 503).json(report);
  });

  return router;
}
