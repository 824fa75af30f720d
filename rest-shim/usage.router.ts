import { Router } from 'express';

export function usageRouter(): Router {
  return Router();
}
