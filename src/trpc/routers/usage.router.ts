import { z } from 'zod';
import { leaderboardQuery, usageListQuery, usageSummaryQuery, usageTimeseriesQuery } from '../../usage/analytics.service.js';
import { authedProcedure, optionalServiceInput, publicProcedure, router, serviceInput } from '../trpc.js';

/** The analytics service takes the request id by argument (an unknown one is NOT_FOUND). */
const eventInput = z.object({ requestId: z.string() });

export const usageRouter = router({
  list: authedProcedure.input(optionalServiceInput(usageListQuery)).query(({ ctx, input }) => ctx.services.analytics.list(ctx.actor, input ?? {})),
  event: authedProcedure.input(serviceInput(eventInput)).query(({ ctx, input }) => ctx.services.analytics.event(ctx.actor, String(input?.requestId ?? ''))),
  summary: authedProcedure.input(optionalServiceInput(usageSummaryQuery)).query(({ ctx, input }) => ctx.services.analytics.summary(ctx.actor, input ?? {})),
  timeseries: authedProcedure.input(serviceInput(usageTimeseriesQuery)).query(({ ctx, input }) => ctx.services.analytics.timeseries(ctx.actor, input)),
  leaderboard: publicProcedure.input(optionalServiceInput(leaderboardQuery)).query(({ ctx, input }) => ctx.services.analytics.leaderboard(ctx.actor, input ?? {})),
});
