import {
  addCredentialInput,
  createUpstreamInput,
  credentialRef,
  setEnabledInput,
  setPricesInput,
  setRoutesInput,
  updateCredentialInput,
  updateUpstreamInput,
  upstreamRef,
} from '../../upstreams/upstreams.schemas.js';
import { authedProcedure, router, serviceInput } from '../trpc.js';

/** Upstream providers, their credentials, routes and prices; the service refuses non-admins with FORBIDDEN. Secrets are write-only. */
export const upstreamsRouter = router({
  list: authedProcedure.query(({ ctx }) => ctx.services.managedUpstreams.list(ctx.actor)),
  get: authedProcedure.input(serviceInput(upstreamRef)).query(({ ctx, input }) => ctx.services.managedUpstreams.get(ctx.actor, input)),
  create: authedProcedure.input(serviceInput(createUpstreamInput)).mutation(({ ctx, input }) => ctx.services.managedUpstreams.create(ctx.actor, input)),
  update: authedProcedure.input(serviceInput(updateUpstreamInput)).mutation(({ ctx, input }) => ctx.services.managedUpstreams.update(ctx.actor, input)),
  setEnabled: authedProcedure.input(serviceInput(setEnabledInput)).mutation(({ ctx, input }) => ctx.services.managedUpstreams.setEnabled(ctx.actor, input)),
  delete: authedProcedure.input(serviceInput(upstreamRef)).mutation(({ ctx, input }) => ctx.services.managedUpstreams.remove(ctx.actor, input)),
  addCredential: authedProcedure.input(serviceInput(addCredentialInput)).mutation(({ ctx, input }) => ctx.services.managedUpstreams.addCredential(ctx.actor, input)),
  updateCredential: authedProcedure.input(serviceInput(updateCredentialInput)).mutation(({ ctx, input }) => ctx.services.managedUpstreams.updateCredential(ctx.actor, input)),
  deleteCredential: authedProcedure.input(serviceInput(credentialRef)).mutation(({ ctx, input }) => ctx.services.managedUpstreams.removeCredential(ctx.actor, input)),
  setRoutes: authedProcedure.input(serviceInput(setRoutesInput)).mutation(({ ctx, input }) => ctx.services.managedUpstreams.setRoutes(ctx.actor, input)),
  setPrices: authedProcedure.input(serviceInput(setPricesInput)).mutation(({ ctx, input }) => ctx.services.managedUpstreams.setPrices(ctx.actor, input)),
});
