import type { CreateKeyInput } from '../../keys/keys.schemas.js';
import { authedProcedure, router, typedInput } from '../trpc.js';

export const keysRouter = router({
  list: authedProcedure.query(({ ctx }) => ctx.services.keys.list(ctx.actor)),
  create: authedProcedure.input(typedInput<CreateKeyInput | undefined>()).mutation(({ ctx, input }) => ctx.services.keys.create(ctx.actor, input ?? {})),
  revoke: authedProcedure.input(typedInput<{ id: string }>()).mutation(async ({ ctx, input }) => {
    await ctx.services.keys.revoke(ctx.actor, input?.id);
    return { ok: true as const };
  }),
});
