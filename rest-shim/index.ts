import { Router } from 'express';
import { authRouter } from './auth.router.js';
import { catalogRouter } from './catalog.router.js';
import { keysRouter } from './keys.router.js';
import { announcementsRouter } from './announcements.router.js';
import { leaderboardRouter } from './leaderboard.router.js';
import { statusRouter } from './status.router.js';
import { usageRouter } from './usage.router.js';
import { paymentsRouter } from './payments.router.js';
import { videosRouter } from './videos.router.js';

/** The cabinet REST paths of SPEC.md, mounted behind the request-context middleware. */
export function cabinetRouter(): Router {
  const router = Router();
  router.use('/auth', authRouter());
  router.use('/keys', keysRouter());
  router.use('/catalog', statusRouter(), catalogRouter());
  router.use('/usage', usageRouter());
  router.use('/leaderboard', leaderboardRouter());
  router.use('/announcements', announcementsRouter());
  router.use('/payments', paymentsRouter());
  router.use('/videos', videosRouter());
  return router;
}

export { healthRouter } from './health.router.js';
export { errorHandler } from './errors.js';
export { checkoutWebhook } from './payments.router.js';
