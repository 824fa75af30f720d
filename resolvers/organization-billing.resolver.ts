import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { requireActor, type RequestContext } from '../src/context.js';
import type { Capability } from '../src/organizations/roles.js';
import type { OrganizationAccess } from '../src/organizations/organizations.service.js';
import type { OrganizationUsageEventView, OrganizationUsageQuery } from '../src/usage/organization-usage.js';
import type { UsageTimeseriesQuery } from '../src/usage/analytics.service.js';
import { domainInput } from './args.js';
import { toUsageEvent } from './usage.resolver.js';
import { BalanceChange } from './types/events.types.js';
import { OrganizationStatement, OrganizationUsageEvent, OrganizationUsageGroupBy, OrganizationUsageSummary } from './types/organization-billing.types.js';
import { Invoice } from './types/payments.types.js';
import { UsageTimeseries } from './types/usage.types.js';

/** The caller's standing in the organization, first thing in every field (outsiders: NOT_FOUND; a role without the capability: FORBIDDEN). */
function access(ctx: RequestContext, organizationId: string, capability?: Capability): Promise<OrganizationAccess> {
  return ctx.services.organizations.access(requireActor(ctx), organizationId, capability);
}

const iso = (value: Date | null | undefined) => (value ? value.toISOString() : undefined);

function toOrganizationEvent(e: OrganizationUsageEventView): OrganizationUsageEvent {
  return { ...toUsageEvent(e), memberId: e.memberId, memberName: e.memberName };
}

/** An organization's wallet, usage by member and key, and statements (issue 56); the rules live in the services. */
@Resolver()
export class OrganizationBillingResolver {
  @Query(() => BalanceChange, { description: 'The organization’s balances now (owner, admin, billing); `transaction` is null.' })
  async organizationBalance(@Ctx() ctx: RequestContext, @Arg('organizationId', () => ID) organizationId: string): Promise<BalanceChange> {
    return ctx.services.organizationUsage.balance(await access(ctx, organizationId));
  }

  @Query(() => [OrganizationUsageEvent], { description: 'The organization’s usage events, newest first (limit 1-200, default 50); a plain member sees their own keys’ only.' })
  async organizationUsage(
    @Ctx() ctx: RequestContext,
    @Arg('organizationId', () => ID) organizationId: string,
    @Arg('memberId', () => ID, { nullable: true }) memberId?: string | null,
    @Arg('apiKeyId', () => ID, { nullable: true }) apiKeyId?: string | null,
    @Arg('from', () => DateTimeISOResolver, { nullable: true }) from?: Date | null,
    @Arg('to', () => DateTimeISOResolver, { nullable: true }) to?: Date | null,
    @Arg('model', () => String, { nullable: true }) model?: string | null,
    @Arg('group', () => String, { nullable: true }) group?: string | null,
    @Arg('status', () => String, { nullable: true }) status?: OrganizationUsageQuery['status'] | null,
    @Arg('providerFamily', () => String, { nullable: true }) providerFamily?: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
  ): Promise<OrganizationUsageEvent[]> {
    const granted = await access(ctx, organizationId);
    const list = await ctx.services.organizationUsage.list(granted, domainInput({ memberId, apiKeyId, from: iso(from), to: iso(to), model, group, status, providerFamily, limit }));
    return list.items.map(toOrganizationEvent);
  }

  @Query(() => OrganizationUsageSummary, { description: 'Totals over a period by member (default), key or model; a plain member’s own only.' })
  async organizationUsageSummary(
    @Ctx() ctx: RequestContext,
    @Arg('organizationId', () => ID) organizationId: string,
    @Arg('from', () => DateTimeISOResolver, { nullable: true }) from?: Date | null,
    @Arg('to', () => DateTimeISOResolver, { nullable: true }) to?: Date | null,
    @Arg('groupBy', () => OrganizationUsageGroupBy, { nullable: true }) groupBy?: OrganizationUsageGroupBy | null,
    @Arg('memberId', () => ID, { nullable: true }) memberId?: string | null,
    @Arg('apiKeyId', () => ID, { nullable: true }) apiKeyId?: string | null,
  ): Promise<OrganizationUsageSummary> {
    const granted = await access(ctx, organizationId);
    const summary = await ctx.services.organizationUsage.summary(granted, domainInput({ from: iso(from), to: iso(to), groupBy, memberId, apiKeyId }));
    return { groupBy: summary.groupBy as OrganizationUsageGroupBy, totals: summary.totals, groups: summary.groups };
  }

  @Query(() => UsageTimeseries, { description: 'The organization’s usage per time bucket, optionally one member’s or key’s (a plain member: their own).' })
  async organizationUsageTimeseries(
    @Ctx() ctx: RequestContext,
    @Arg('organizationId', () => ID) organizationId: string,
    @Arg('from', () => DateTimeISOResolver) from: Date,
    @Arg('to', () => DateTimeISOResolver) to: Date,
    @Arg('bucket', () => String, { nullable: true, description: 'minute, hour (default) or day.' }) bucket?: UsageTimeseriesQuery['bucket'] | null,
    @Arg('model', () => String, { nullable: true }) model?: string | null,
    @Arg('group', () => String, { nullable: true }) group?: string | null,
    @Arg('providerFamily', () => String, { nullable: true }) providerFamily?: string | null,
    @Arg('memberId', () => ID, { nullable: true }) memberId?: string | null,
    @Arg('apiKeyId', () => ID, { nullable: true }) apiKeyId?: string | null,
  ): Promise<UsageTimeseries> {
    const granted = await access(ctx, organizationId);
    return ctx.services.organizationUsage.timeseries(granted, domainInput({ from: from.toISOString(), to: to.toISOString(), bucket, model, group, providerFamily, memberId, apiKeyId }));
  }

  @Query(() => OrganizationStatement, { description: 'The organization’s statement for a UTC month (owner, billing).' })
  async organizationStatement(
    @Ctx() ctx: RequestContext,
    @Arg('organizationId', () => ID) organizationId: string,
    @Arg('month', () => String, { description: 'YYYY-MM.' }) month: string,
  ): Promise<OrganizationStatement> {
    return ctx.services.organizationUsage.statement(await access(ctx, organizationId, 'billing'), { month });
  }

  @Query(() => [Invoice], { description: 'The organization’s invoices, newest first (owner, billing; limit 1-100, default 25).' })
  async organizationInvoices(
    @Ctx() ctx: RequestContext,
    @Arg('organizationId', () => ID) organizationId: string,
    @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
  ): Promise<Invoice[]> {
    return ctx.services.payments.organizationInvoices(await access(ctx, organizationId, 'billing'), domainInput({ limit }));
  }

  @Mutation(() => Invoice, { description: 'An invoice that funds the organization’s wallet (owner, billing; the caller accepted the agreement and verified their e-mail).' })
  async createOrganizationInvoice(
    @Ctx() ctx: RequestContext,
    @Arg('organizationId', () => ID) organizationId: string,
    @Arg('amountUsd', () => String, { description: 'A decimal string, e.g. "25.50".' }) amountUsd: string,
    @Arg('method', () => String) method: string,
  ): Promise<Invoice> {
    const granted = await access(ctx, organizationId, 'billing');
    return ctx.services.payments.createOrganizationInvoice(requireActor(ctx), granted, { amountUsd, method });
  }
}
