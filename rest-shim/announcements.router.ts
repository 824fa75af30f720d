import { Router } from 'express';

export function announcementsRouter(): Router {
  return Router();
}
