import { z } from 'zod';
import { createEndpointInput, deliveriesInput, endpointIdInput, updateEndpointInput } from '../../events/webhooks/webhooks.schemas.js';
import { authedProcedure, optionalServiceInput, router, serviceInput } from '../trpc.js';

const byDelivery = z.object({ deliveryId: endpointIdInput.shape.id });

/** Outbound webhooks: the same service calls as GraphQL's (docs/webhooks.md). */
export const webhooksRouter = router({
  eventTypes: authedProcedure.query(({ ctx }) => ctx.services.webhooks.eventTypes()),
  list: authedProcedure.query(({ ctx }) => ctx.services.webhooks.list(ctx.actor)),
  deliveries: authedProcedure.input(serviceInput(deliveriesInput)).query(({ ctx, input }) => ctx.services.webhooks.deliveries(ctx.actor, input?.endpointId, input?.limit)),
  create: authedProcedure.input(optionalServiceInput(createEndpointInput)).mutation(({ ctx, input }) => ctx.services.webhooks.create(ctx.actor, input!)),
  update: authedProcedure.input(serviceInput(updateEndpointInput)).mutation(({ ctx, input }) => ctx.services.webhooks.update(ctx.actor, input)),
  remove: authedProcedure.input(serviceInput(endpointIdInput)).mutation(async ({ ctx, input }) => {
    await ctx.services.webhooks.remove(ctx.actor, input?.id);
    return { ok: true as const };
  }),
  rotateSecret: authedProcedure.input(serviceInput(endpointIdInput)).mutation(({ ctx, input }) => ctx.services.webhooks.rotateSecret(ctx.actor, input?.id)),
  sendTest: authedProcedure.input(serviceInput(endpointIdInput)).mutation(async ({ ctx, input }) => ({ messageId: await ctx.services.webhooks.sendTest(ctx.actor, input?.id) })),
  replay: authedProcedure.input(serviceInput(byDelivery)).mutation(({ ctx, input }) => ctx.services.webhooks.replay(ctx.actor, input?.deliveryId)),
});
