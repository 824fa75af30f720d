import { Router } from 'express';
import type { LeaderboardEntry } from '../src/usage/analytics.service.js';
import { from, handle } from './handler.js';

const entryJson = (e: LeaderboardEntry) => ({ rank: e.rank, user: e.user, tokens: e.tokens, saved_usd: e.savedUsd, is_me: e.isMe });

/** SPEC.md 4.3: today's ranking; public, with `me` for a signed-in caller. */
export function leaderboardRouter(): Router {
  const router = Router();
  router.get('/daily', handle(async (ctx, req, res) => {
    const board = await from('query', () => ctx.services.analytics.leaderboard(ctx.actor ?? null, req.query as never));
    res.json({
      date: board.date,
      timezone: board.timezone,
      prize: board.prize,
      total_tokens: board.totalTokens,
      total_saved_usd: board.totalSavedUsd,
      items: board.items.map(entryJson),
      me: board.me ? entryJson(board.me) : null,
    });
  }));
  return router;
}
