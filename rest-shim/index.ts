import { Router } from 'express';
import { authRouter } from './auth.router.js';
import { catalogRouter } from './catalog.router.js';
import { keysRouter } from './keys.router.js';

/** The cabinet REST paths of SPEC.md, mounted behind the request-context middleware. */
export function cabinetRouter(): Router {
  const router = Router();
  router.use('/auth', authRouter());
  router.use('/keys', keysRouter());
  router.use('/catalog', catalogRouter());
  return router;
}

export { healthRouter } from './health.router.js';
export { errorHandler } from './errors.js';
