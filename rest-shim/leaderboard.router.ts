import { Router } from 'express';
import { z } from 'zod';
import { leaderboardQuery, type LeaderboardEntry } from '../src/usage/analytics.service.js';
import { decimal } from './answer-fields.js';
import { handle, SpecNames, withInput } from './handler.js';
import { reply, routes, serve } from './route.js';

const entryAnswer = z.object({ rank: z.int(), user: z.string(), tokens: z.int(), saved_usd: decimal.nullable(), is_me: z.boolean() });

const entryJson = (e: LeaderboardEntry): z.infer<typeof entryAnswer> => ({ rank: e.rank, user: e.user, tokens: e.tokens, saved_usd: e.savedUsd, is_me: e.isMe });

export const leaderboardAnswer = z
  .object({
    date: z.string(),
    timezone: z.string(),
    prize: z.string(),
    total_tokens: z.int(),
    total_saved_usd: decimal,
    items: z.array(entryAnswer),
    me: entryAnswer.nullable(),
  })
  .meta({ id: 'DailyLeaderboard', description: 'SPEC.md Daily leaderboard; `me` is the signed-in caller’s entry when there is one.' });

/** SPEC.md 4.3: today's ranking; public, with `me` for a signed-in caller. */
export const LEADERBOARD_ROUTES = routes('/leaderboard', 'usage', {
  daily: {
    method: 'get',
    at: '/daily',
    summary: 'Today’s ranking',
    access: 'optional-session',
    query: new SpecNames(leaderboardQuery),
    answers: { 200: { description: 'Daily leaderboard', json: leaderboardAnswer } },
  },
});

export function leaderboardRouter(): Router {
  const router = Router();
  const { daily } = LEADERBOARD_ROUTES;
  serve(router, daily, handle(async (ctx, req, res) => {
    const board = await withInput('query', daily.query, req.query, (query) => ctx.services.analytics.leaderboard(ctx.actor ?? null, query));
    reply(res, daily, 200, {
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
