import type { AdjustBalanceInput, TrustedPartnerInput } from '../../billing/billing.schemas.js';
import type { CatalogModelInput, PricingPlanInput } from '../../catalog/catalog.schemas.js';
import type { AccountLimitsInput, KeyLimitsInput } from '../../keys/keys.schemas.js';
import { authedProcedure, router, typedInput } from '../trpc.js';

/** Operator procedures; services refuse non-admins with FORBIDDEN. */
export const adminRouter = router({
  adjustBalance: authedProcedure.input(typedInput<AdjustBalanceInput>()).mutation(({ ctx, input }) => ctx.services.billing.adjustBalance(ctx.actor, input)),
  setKeyLimits: authedProcedure.input(typedInput<KeyLimitsInput>()).mutation(({ ctx, input }) => ctx.services.keys.setLimits(ctx.actor, input)),
  setAccountLimits: authedProcedure.input(typedInput<AccountLimitsInput>()).mutation(({ ctx, input }) => ctx.services.keys.setAccountLimits(ctx.actor, input)),
  setTrustedPartner: authedProcedure.input(typedInput<TrustedPartnerInput>()).mutation(({ ctx, input }) => ctx.services.billing.setTrustedPartner(ctx.actor, input)),
  revokeTrustedPartner: authedProcedure.input(typedInput<{ userId: string }>()).mutation(({ ctx, input }) => ctx.services.billing.revokeTrustedPartner(ctx.actor, input?.userId)),
  upsertPricingPlan: authedProcedure.input(typedInput<PricingPlanInput>()).mutation(({ ctx, input }) => ctx.services.catalog.upsertPlan(ctx.actor, input)),
  setModelPrices: authedProcedure
    .input(typedInput<{ modelId: string; group: string; prices: unknown }>())
    .mutation(({ ctx, input }) => ctx.services.catalog.setModelPrices(ctx.actor, input?.modelId, input?.group, input?.prices)),
  upsertCatalogModel: authedProcedure.input(typedInput<CatalogModelInput>()).mutation(({ ctx, input }) => ctx.services.catalog.upsertModel(ctx.actor, input)),
  removeCatalogModel: authedProcedure.input(typedInput<{ modelId: string }>()).mutation(({ ctx, input }) => ctx.services.catalog.removeModel(ctx.actor, input?.modelId)),
});
