import { Router } from 'express';
import { z } from 'zod';
import type { Readiness } from '../src/readiness.js';
import { timestamp } from './answer-fields.js';
import { reply, routes, serve } from './route.js';

export const SERVICE_VERSION = '1.0.0';

const healthAnswer = z.object({ status: z.literal('ok'), service: z.literal('baikal'), version: z.string() });

const statusAnswer = z.object({
  status: z.enum(['ok', 'starting', 'draining']),
  service: z.literal('baikal'),
  version: z.string(),
  started_at: timestamp,
  uptime_seconds: z.string().describe('Whole seconds since the process started, as a string (SPEC.md: string values only)'),
});

const readinessAnswer = z
  .object({
    ready: z.boolean(),
    status: z.enum(['ready', 'starting', 'draining', 'degraded']),
    database: z.enum(['ok', 'unreachable', 'not_migrated']),
    redis: z.enum(['ok', 'unreachable']).optional(),
  })
  .meta({ id: 'Readiness', description: 'Whether this process should receive traffic (503 until it is ready and once it drains).' });

/** SPEC.md 4.5: /status, /health, /live (string values only) and /ready (503 until ready and once draining). */
export const HEALTH_ROUTES = routes('', 'health', {
  live: { method: 'get', at: '/live', summary: 'Liveness: the process answers', access: 'public', answers: { 200: { description: 'Alive', json: z.object({ status: z.literal('ok') }) } } },
  health: { method: 'get', at: '/health', summary: 'The service and its version', access: 'public', answers: { 200: { description: 'Healthy', json: healthAnswer } } },
  status: { method: 'get', at: '/status', summary: 'The process: starting, serving or draining, and its uptime', access: 'public', answers: { 200: { description: 'Status', json: statusAnswer } } },
  ready: {
    method: 'get',
    at: '/ready',
    summary: 'Readiness for traffic (database reachable and migrated, not draining)',
    access: 'public',
    answers: { 200: { description: 'Ready', json: readinessAnswer }, 503: { description: 'Not ready', json: readinessAnswer } },
  },
});

export function healthRouter(readiness: Readiness, startedAt: Date): Router {
  const router = Router();

  serve(router, HEALTH_ROUTES.live, (_req, res) => {
    reply(res, HEALTH_ROUTES.live, 200, { status: 'ok' });
  });

  serve(router, HEALTH_ROUTES.health, (_req, res) => {
    reply(res, HEALTH_ROUTES.health, 200, { status: 'ok', service: 'baikal', version: SERVICE_VERSION });
  });

  serve(router, HEALTH_ROUTES.status, (_req, res) => {
    reply(res, HEALTH_ROUTES.status, 200, {
      status: readiness.draining ? 'draining' : readiness.migrated ? 'ok' : 'starting',
      service: 'baikal',
      version: SERVICE_VERSION,
      started_at: startedAt.toISOString(),
      uptime_seconds: String(Math.floor((Date.now() - startedAt.getTime()) / 1000)),
    });
  });

  serve(router, HEALTH_ROUTES.ready, async (_req, res) => {
    const report = await readiness.check();
    reply(res, HEALTH_ROUTES.ready, report.ready ? 200 : 503, report);
  });

  return router;
}
