import type { MarginQuery, UpstreamUsageQuery } from '../../usage/margin.service.js';
import { authedProcedure, router, typedInput } from '../trpc.js';

/** The operator's running business (admins; services refuse others with FORBIDDEN): routing state, the test action, margin. */
export const operationsRouter = router({
  upstreamHealth: authedProcedure.query(({ ctx }) => ctx.services.upstreamOps.health(ctx.actor)),
  testUpstreamCredential: authedProcedure
    .input(typedInput<{ upstreamId: string; credentialId: string; model?: string | null }>())
    .mutation(({ ctx, input }) => ctx.services.upstreamOps.test(ctx.actor, input)),
  margin: authedProcedure.input(typedInput<MarginQuery | undefined>()).query(({ ctx, input }) => ctx.services.margin.report(ctx.actor, input ?? {})),
  upstreamUsage: authedProcedure.input(typedInput<UpstreamUsageQuery | undefined>()).query(({ ctx, input }) => ctx.services.margin.upstreamUsage(ctx.actor, input ?? {})),
});
