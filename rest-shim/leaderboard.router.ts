import { Router } from 'express';

export function leaderboardRouter(): Router {
  return Router();
}
