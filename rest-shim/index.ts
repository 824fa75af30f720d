import { Router } from 'express';
import { AUTH_ROUTES, authRouter } from './auth.router.js';
import { CATALOG_ROUTES, catalogRouter } from './catalog.router.js';
import { KEY_ROUTES, keysRouter } from './keys.router.js';
import { ANNOUNCEMENT_ROUTES, announcementsRouter } from './announcements.router.js';
import { LEADERBOARD_ROUTES, leaderboardRouter } from './leaderboard.router.js';
import { mountOf } from './route.js';
import { statusRouter } from './status.router.js';
import { USAGE_ROUTES, usageRouter } from './usage.router.js';
import { PAYMENT_ROUTES, paymentsRouter } from './payments.router.js';
import { VIDEO_ROUTES, videosRouter } from './videos.router.js';
import { ORG_ROUTES, orgsRouter } from './orgs.router.js';

/** The cabinet REST paths of SPEC.md, mounted behind the request-context middleware (each where its routes were declared). */
export function cabinetRouter(): Router {
  const router = Router();
  router.use(mountOf(AUTH_ROUTES), authRouter());
  router.use(mountOf(KEY_ROUTES), keysRouter());
  // The public status page is mounted before the catalog router (both under /catalog).
  router.use(mountOf(CATALOG_ROUTES), statusRouter(), catalogRouter());
  router.use(mountOf(USAGE_ROUTES), usageRouter());
  router.use(mountOf(LEADERBOARD_ROUTES), leaderboardRouter());
  router.use(mountOf(ANNOUNCEMENT_ROUTES), announcementsRouter());
  router.use(mountOf(PAYMENT_ROUTES), paymentsRouter());
  router.use(mountOf(VIDEO_ROUTES), videosRouter());
  router.use(mountOf(ORG_ROUTES), orgsRouter());
  return router;
}

export { healthRouter } from './health.router.js';
export { errorHandler } from './errors.js';
export { checkoutWebhook } from './payments.router.js';
