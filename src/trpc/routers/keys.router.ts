import { z } from 'zod';
import { createKeyInput, keyIdInput } from '../../keys/keys.schemas.js';
import { authedProcedure, optionalServiceInput, router, serviceInput } from '../trpc.js';

/** A key by id: the service's own id field, named `id` on this surface. */
const byId = z.object({ id: keyIdInput.shape.keyId });

export const keysRouter = router({
  list: authedProcedure.query(({ ctx }) => ctx.services.keys.list(ctx.actor)),
  create: authedProcedure.input(optionalServiceInput(createKeyInput)).mutation(({ ctx, input }) => ctx.services.keys.create(ctx.actor, input ?? {})),
  revoke: authedProcedure.input(serviceInput(byId)).mutation(async ({ ctx, input }) => {
    await ctx.services.keys.revoke(ctx.actor, input?.id);
    return { ok: true as const };
  }),
});
