import { Arg, Ctx, FieldResolver, ID, Int, Query, Resolver, Root } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { domainInput } from './args.js';
import { requireActor, type RequestContext } from '../src/context.js';
import type { TotalsView, UsageEventView, UsageListQuery, UsageTimeseriesQuery } from '../src/usage/analytics.service.js';
import { DailyLeaderboard, UsageBreakdown, UsageEvent, UsageKeyRef, UsageSummary, UsageTimeseries } from './types/usage.types.js';


export function toUsageEvent(e: UsageEventView): UsageEvent {
  return {
    id: e.id,
    requestId: e.requestId,
    clientSurface: e.clientSurface,
    createdAt: e.createdAt,
    completedAt: e.completedAt,
    providerFamily: e.providerFamily,
    routeGroup: e.routeGroup,
    routeGroupLabel: e.routeGroupLabel,
    endpoint: e.endpoint,
    model: e.model,
    status: e.status,
    errorCode: e.errorCode,
    latencyMs: e.latencyMs,
    promptTokens: e.promptTokens,
    completionTokens: e.completionTokens,
    cacheReadTokens: e.cacheReadTokens,
    cacheWriteTokens: e.cacheWriteTokens,
    totalTokens: e.totalTokens,
    cacheHitRatio: e.cacheHitRatio,
    amountUsd: e.amountUsd,
    officialCostUsd: e.officialCostUsd,
    savedUsd: e.savedUsd,
    apiKeyId: e.apiKeyId,
  };
}

const breakdown = (entries: [string, TotalsView & { label?: string }][]): UsageBreakdown[] =>
  entries.map(([key, totals]) => ({ key, label: totals.label ?? key, totals }));

const iso = (value: Date | null | undefined) => (value ? value.toISOString() : undefined);

@Resolver(() => UsageEvent)
export class UsageResolver {
  @Query(() => [UsageEvent], { description: 'The signed-in account’s usage events, newest first (limit 1-200, default 50).' })
  async usage(
    @Ctx() ctx: RequestContext,
    @Arg('from', () => DateTimeISOResolver, { nullable: true }) from?: Date | null,
    @Arg('to', () => DateTimeISOResolver, { nullable: true }) to?: Date | null,
    @Arg('model', () => String, { nullable: true }) model?: string | null,
    @Arg('group', () => String, { nullable: true }) group?: string | null,
    // Typed as the service's input: GraphQL takes any string, and the service refuses one it does not know (422).
    @Arg('status', () => String, { nullable: true }) status?: UsageListQuery['status'] | null,
    @Arg('providerFamily', () => String, { nullable: true }) providerFamily?: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit?: number | null,
  ): Promise<UsageEvent[]> {
    const list = await ctx.services.analytics.list(requireActor(ctx), domainInput({ from: iso(from), to: iso(to), model, group, status, providerFamily, limit }));
    return list.items.map(toUsageEvent);
  }

  @Query(() => UsageEvent, { description: 'One usage event by its request id; NOT_FOUND for another account’s.' })
  async usageEvent(@Ctx() ctx: RequestContext, @Arg('requestId', () => ID) requestId: string): Promise<UsageEvent> {
    return toUsageEvent(await ctx.services.analytics.event(requireActor(ctx), requestId));
  }

  @Query(() => UsageSummary)
  async usageSummary(
    @Ctx() ctx: RequestContext,
    @Arg('from', () => DateTimeISOResolver, { nullable: true }) from?: Date | null,
    @Arg('to', () => DateTimeISOResolver, { nullable: true }) to?: Date | null,
  ): Promise<UsageSummary> {
    const summary = await ctx.services.analytics.summary(requireActor(ctx), { from: iso(from), to: iso(to) });
    return { totals: summary.totals, byModel: breakdown(Object.entries(summary.byModel)), byGroup: breakdown(Object.entries(summary.byGroup)) };
  }

  @Query(() => UsageTimeseries)
  async usageTimeseries(
    @Ctx() ctx: RequestContext,
    @Arg('from', () => DateTimeISOResolver) from: Date,
    @Arg('to', () => DateTimeISOResolver) to: Date,
    @Arg('bucket', () => String, { nullable: true, description: 'minute, hour (default) or day.' }) bucket?: UsageTimeseriesQuery['bucket'] | null,
    @Arg('model', () => String, { nullable: true }) model?: string | null,
    @Arg('group', () => String, { nullable: true }) group?: string | null,
    @Arg('providerFamily', () => String, { nullable: true }) providerFamily?: string | null,
  ): Promise<UsageTimeseries> {
    return ctx.services.analytics.timeseries(
      requireActor(ctx),
      domainInput({ from: from.toISOString(), to: to.toISOString(), bucket, model, group, providerFamily }),
    );
  }

  @Query(() => DailyLeaderboard, { description: 'Today’s ranking; `me` is the signed-in user’s entry when there is one.' })
  async leaderboard(@Ctx() ctx: RequestContext, @Arg('limit', () => Int, { nullable: true }) limit?: number | null): Promise<DailyLeaderboard> {
    return ctx.services.analytics.leaderboard(ctx.actor, domainInput({ limit }));
  }

  @FieldResolver(() => UsageKeyRef, { nullable: true, description: 'The key the request was made with (batched: one query per page).' })
  async apiKey(@Root() event: UsageEvent, @Ctx() ctx: RequestContext): Promise<UsageKeyRef | null> {
    return event.apiKeyId ? ctx.loaders.apiKeys.load(event.apiKeyId) : null;
  }
}
