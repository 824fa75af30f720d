import { authedProcedure, publicProcedure, router } from '../trpc.js';

export const catalogRouter = router({
  models: publicProcedure.query(({ ctx }) => ctx.services.catalog.publicCatalog()),
  myModels: authedProcedure.query(async ({ ctx }) => ctx.services.catalog.viewFor(await ctx.services.keys.scopesOf(ctx.actor.userId))),
});
