import type {
  AddCredentialInput,
  CreateUpstreamInput,
  SetEnabledInput,
  SetPricesInput,
  SetRoutesInput,
  UpdateCredentialInput,
  UpdateUpstreamInput,
} from '../../upstreams/upstreams.schemas.js';
import { authedProcedure, router, typedInput } from '../trpc.js';

/** Upstream providers, their credentials, routes and prices; the service refuses non-admins with FORBIDDEN. Secrets are write-only. */
export const upstreamsRouter = router({
  list: authedProcedure.query(({ ctx }) => ctx.services.managedUpstreams.list(ctx.actor)),
  get: authedProcedure.input(typedInput<{ id: string }>()).query(({ ctx, input }) => ctx.services.managedUpstreams.get(ctx.actor, input)),
  create: authedProcedure.input(typedInput<CreateUpstreamInput>()).mutation(({ ctx, input }) => ctx.services.managedUpstreams.create(ctx.actor, input)),
  update: authedProcedure.input(typedInput<UpdateUpstreamInput>()).mutation(({ ctx, input }) => ctx.services.managedUpstreams.update(ctx.actor, input)),
  setEnabled: authedProcedure.input(typedInput<SetEnabledInput>()).mutation(({ ctx, input }) => ctx.services.managedUpstreams.setEnabled(ctx.actor, input)),
  delete: authedProcedure.input(typedInput<{ id: string }>()).mutation(({ ctx, input }) => ctx.services.managedUpstreams.remove(ctx.actor, input)),
  addCredential: authedProcedure.input(typedInput<AddCredentialInput>()).mutation(({ ctx, input }) => ctx.services.managedUpstreams.addCredential(ctx.actor, input)),
  updateCredential: authedProcedure.input(typedInput<UpdateCredentialInput>()).mutation(({ ctx, input }) => ctx.services.managedUpstreams.updateCredential(ctx.actor, input)),
  deleteCredential: authedProcedure.input(typedInput<{ id: string }>()).mutation(({ ctx, input }) => ctx.services.managedUpstreams.removeCredential(ctx.actor, input)),
  setRoutes: authedProcedure.input(typedInput<SetRoutesInput>()).mutation(({ ctx, input }) => ctx.services.managedUpstreams.setRoutes(ctx.actor, input)),
  setPrices: authedProcedure.input(typedInput<SetPricesInput>()).mutation(({ ctx, input }) => ctx.services.managedUpstreams.setPrices(ctx.actor, input)),
});
