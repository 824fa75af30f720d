import { Router } from 'express';

export function statusRouter(): Router {
  return Router();
}
