import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { requireActor, type RequestContext } from '../src/context.js';
import type { CatalogModelInput, PricingPlanInput as PricingPlanInputData } from '../src/catalog/catalog.schemas.js';
import { domainInput } from './args.js';
import { AdminAccount } from './types/account.types.js';
import { AdminInvoice } from './types/payments.types.js';
import { AdjustBalanceInput, LedgerPosting, TrustedPartner, TrustedPartnerInput } from './types/billing.types.js';
import { CatalogModel, PricingPlanInput, PricingPlanView } from './types/catalog.types.js';
import { AccountLimits, AccountLimitsInput, AdminKey, KeyLimits, KeyLimitsInput } from './types/keys.types.js';

/** Operator mutations; every one answers FORBIDDEN unless the caller is an admin. */
@Resolver()
export class AdminResolver {
  @Query(() => [AdminAccount], { description: 'Admin: accounts whose username, e-mail or id matches `search` (all when empty), newest first.' })
  async adminAccounts(
    @Ctx() ctx: RequestContext,
    @Arg('search', () => String, { nullable: true }) search?: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
  ): Promise<AdminAccount[]> {
    return ctx.services.adminAccounts.search(requireActor(ctx), domainInput({ search, limit }));
  }

  @Query(() => [AdminKey], { description: 'Admin: every key of one account (revoked ones too) with its limit overrides.' })
  async adminAccountKeys(@Ctx() ctx: RequestContext, @Arg('userId', () => ID) userId: string): Promise<AdminKey[]> {
    return ctx.services.adminAccounts.keysOf(requireActor(ctx), { userId });
  }

  @Query(() => [AdminInvoice], { description: 'Admin: the newest invoices of every account, optionally of one status.' })
  async adminInvoices(
    @Ctx() ctx: RequestContext,
    @Arg('status', () => String, { nullable: true }) status?: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
  ): Promise<AdminInvoice[]> {
    return ctx.services.payments.adminInvoices(requireActor(ctx), domainInput({ status, limit }));
  }

  @Mutation(() => Int, { description: 'Admin: ends every open session of an account (its sockets close too); answers how many ended.' })
  async endSessions(@Ctx() ctx: RequestContext, @Arg('userId', () => ID) userId: string): Promise<number> {
    return ctx.services.adminAccounts.endSessions(requireActor(ctx), { userId });
  }

  @Mutation(() => LedgerPosting, { description: 'Credits (positive) or debits (negative) an account, with a reason.' })
  async adjustBalance(@Ctx() ctx: RequestContext, @Arg('input', () => AdjustBalanceInput) input: AdjustBalanceInput): Promise<LedgerPosting> {
    return ctx.services.billing.adjustBalance(requireActor(ctx), domainInput(input));
  }

  @Mutation(() => KeyLimits, { description: 'Overrides a key’s requests per minute, concurrency or monthly spend cap.' })
  async setKeyLimits(@Ctx() ctx: RequestContext, @Arg('input', () => KeyLimitsInput) input: KeyLimitsInput): Promise<KeyLimits> {
    return ctx.services.keys.setLimits(requireActor(ctx), domainInput(input, 'rpmLimit', 'concurrencyLimit', 'monthlySpendCap'));
  }

  @Mutation(() => AccountLimits, { description: 'Overrides how many requests an account may have in flight across its keys.' })
  async setAccountLimits(@Ctx() ctx: RequestContext, @Arg('input', () => AccountLimitsInput) input: AccountLimitsInput): Promise<AccountLimits> {
    return ctx.services.keys.setAccountLimits(requireActor(ctx), { userId: input.userId, concurrencyLimit: input.concurrencyLimit ?? null });
  }

  @Mutation(() => TrustedPartner)
  async setTrustedPartner(@Ctx() ctx: RequestContext, @Arg('input', () => TrustedPartnerInput) input: TrustedPartnerInput): Promise<TrustedPartner> {
    return ctx.services.billing.setTrustedPartner(requireActor(ctx), { ...input });
  }

  @Mutation(() => TrustedPartner)
  async revokeTrustedPartner(@Ctx() ctx: RequestContext, @Arg('userId', () => ID) userId: string): Promise<TrustedPartner> {
    return ctx.services.billing.revokeTrustedPartner(requireActor(ctx), userId);
  }

  @Query(() => [PricingPlanView], { description: 'Admin: every pricing plan (the default first) with its multiplier and per-model overrides.' })
  adminPricingPlans(@Ctx() ctx: RequestContext): PricingPlanView[] {
    return ctx.services.catalog.plans(requireActor(ctx));
  }

  @Mutation(() => PricingPlanView)
  async upsertPricingPlan(@Ctx() ctx: RequestContext, @Arg('input', () => PricingPlanInput) input: PricingPlanInput): Promise<PricingPlanView> {
    return ctx.services.catalog.upsertPlan(
      requireActor(ctx),
      domainInput(input) as PricingPlanInputData,
    );
  }

  @Mutation(() => CatalogModel, { description: 'Sets a model’s public prices in one group; billing uses them from the next request.' })
  async setModelPrices(
    @Ctx() ctx: RequestContext,
    @Arg('modelId', () => ID) modelId: string,
    @Arg('group', () => ID) group: string,
    @Arg('prices', () => GraphQLJSONObject, { description: '{tokens: {input, output, cacheRead, cacheWrite}} or {perGeneration} or {perSecond}' }) prices: Record<string, unknown>,
  ): Promise<CatalogModel> {
    return (await ctx.services.catalog.setModelPrices(requireActor(ctx), modelId, group, prices)) as CatalogModel;
  }

  @Mutation(() => CatalogModel, { description: 'Adds or replaces a catalog model (the catalog file’s model shape).' })
  async upsertCatalogModel(@Ctx() ctx: RequestContext, @Arg('model', () => GraphQLJSONObject) model: Record<string, unknown>): Promise<CatalogModel> {
    return (await ctx.services.catalog.upsertModel(requireActor(ctx), model as CatalogModelInput)) as CatalogModel;
  }

  @Mutation(() => Boolean)
  async removeCatalogModel(@Ctx() ctx: RequestContext, @Arg('modelId', () => ID) modelId: string): Promise<boolean> {
    return ctx.services.catalog.removeModel(requireActor(ctx), modelId);
  }
}
