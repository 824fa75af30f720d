import { z } from 'zod';
import { marginQuery, upstreamUsageQuery } from '../../usage/margin.service.js';
import { authedProcedure, optionalServiceInput, router, serviceInput } from '../trpc.js';

/** The upstream test takes its input as it is (it looks the ids up among the enabled routes). */
const credentialTestInput = z.object({ upstreamId: z.string(), credentialId: z.string(), model: z.string().nullish() });

/** The operator's running business (admins; services refuse others with FORBIDDEN): routing state, the test action, margin. */
export const operationsRouter = router({
  upstreamHealth: authedProcedure.query(({ ctx }) => ctx.services.upstreamOps.health(ctx.actor)),
  testUpstreamCredential: authedProcedure.input(serviceInput(credentialTestInput)).mutation(({ ctx, input }) => ctx.services.upstreamOps.test(ctx.actor, input)),
  margin: authedProcedure.input(optionalServiceInput(marginQuery)).query(({ ctx, input }) => ctx.services.margin.report(ctx.actor, input ?? {})),
  upstreamUsage: authedProcedure.input(optionalServiceInput(upstreamUsageQuery)).query(({ ctx, input }) => ctx.services.margin.upstreamUsage(ctx.actor, input ?? {})),
});
