import { Router } from 'express';
import { authRouter } from './auth.router.js';

/** The cabinet REST paths of SPEC.md, mounted behind the request-context middleware. */
export function cabinetRouter(): Router {
  const router = Router();
  router.use('/auth', authRouter());
  return router;
}

export { healthRouter } from './health.router.js';
export { errorHandler } from './errors.js';
