import type { UsageListQuery, UsageSummaryQuery, UsageTimeseriesQuery } from '../../usage/analytics.service.js';
import { authedProcedure, publicProcedure, router, typedInput } from '../trpc.js';

export const usageRouter = router({
  list: authedProcedure.input(typedInput<UsageListQuery | undefined>()).query(({ ctx, input }) => ctx.services.analytics.list(ctx.actor, input ?? {})),
  event: authedProcedure.input(typedInput<{ requestId: string }>()).query(({ ctx, input }) => ctx.services.analytics.event(ctx.actor, String(input?.requestId ?? ''))),
  summary: authedProcedure.input(typedInput<UsageSummaryQuery | undefined>()).query(({ ctx, input }) => ctx.services.analytics.summary(ctx.actor, input ?? {})),
  timeseries: authedProcedure.input(typedInput<UsageTimeseriesQuery>()).query(({ ctx, input }) => ctx.services.analytics.timeseries(ctx.actor, input)),
  leaderboard: publicProcedure.input(typedInput<{ limit?: number } | undefined>()).query(({ ctx, input }) => ctx.services.analytics.leaderboard(ctx.actor, input ?? {})),
});
