import { z } from 'zod';
import { adjustBalanceInput, trustedPartnerInput, userIdInput } from '../../billing/billing.schemas.js';
import { catalogModel, groupPrices, pricingPlan } from '../../catalog/catalog.schemas.js';
import { accountLimitsInput, keyLimitsInput } from '../../keys/keys.schemas.js';
import { authedProcedure, router, serviceInput } from '../trpc.js';

/** The catalog service takes these by argument; their types are the catalog's own fields. */
const modelPricesInput = z.object({ modelId: catalogModel.shape.id, group: z.string(), prices: groupPrices });
const modelIdInput = z.object({ modelId: catalogModel.shape.id });

/** Operator procedures; services refuse non-admins with FORBIDDEN. */
export const adminRouter = router({
  adjustBalance: authedProcedure.input(serviceInput(adjustBalanceInput)).mutation(({ ctx, input }) => ctx.services.billing.adjustBalance(ctx.actor, input)),
  setKeyLimits: authedProcedure.input(serviceInput(keyLimitsInput)).mutation(({ ctx, input }) => ctx.services.keys.setLimits(ctx.actor, input)),
  setAccountLimits: authedProcedure.input(serviceInput(accountLimitsInput)).mutation(({ ctx, input }) => ctx.services.keys.setAccountLimits(ctx.actor, input)),
  setTrustedPartner: authedProcedure.input(serviceInput(trustedPartnerInput)).mutation(({ ctx, input }) => ctx.services.billing.setTrustedPartner(ctx.actor, input)),
  revokeTrustedPartner: authedProcedure.input(serviceInput(userIdInput)).mutation(({ ctx, input }) => ctx.services.billing.revokeTrustedPartner(ctx.actor, input?.userId)),
  upsertPricingPlan: authedProcedure.input(serviceInput(pricingPlan)).mutation(({ ctx, input }) => ctx.services.catalog.upsertPlan(ctx.actor, input)),
  setModelPrices: authedProcedure
    .input(serviceInput(modelPricesInput))
    .mutation(({ ctx, input }) => ctx.services.catalog.setModelPrices(ctx.actor, input?.modelId, input?.group, input?.prices)),
  upsertCatalogModel: authedProcedure.input(serviceInput(catalogModel)).mutation(({ ctx, input }) => ctx.services.catalog.upsertModel(ctx.actor, input)),
  removeCatalogModel: authedProcedure.input(serviceInput(modelIdInput)).mutation(({ ctx, input }) => ctx.services.catalog.removeModel(ctx.actor, input?.modelId)),
});
