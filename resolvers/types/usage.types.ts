import { Field, ID, Int, ObjectType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';

@ObjectType({ description: 'The key a request was made with.' })
export class UsageKeyRef {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  label!: string | null;
}

@ObjectType({ description: 'One inference request (SPEC.md Usage event). Amounts and prices are exact decimal strings.' })
export class UsageEvent {
  @Field(() => ID) id!: string;
  @Field(() => String) requestId!: string;
  @Field(() => String) clientSurface!: string;
  @Field(() => DateTimeISOResolver) createdAt!: Date;
  @Field(() => DateTimeISOResolver, { nullable: true }) completedAt!: Date | null;
  @Field(() => String) providerFamily!: string;
  @Field(() => String, { nullable: true }) routeGroup!: string | null;
  @Field(() => String) routeGroupLabel!: string;
  @Field(() => String, { nullable: true }) endpoint!: string | null;
  @Field(() => String) model!: string;
  @Field(() => String) status!: string;
  @Field(() => String, { nullable: true }) errorCode!: string | null;
  @Field(() => Int, { nullable: true }) latencyMs!: number | null;
  @Field(() => Int, { nullable: true }) promptTokens!: number | null;
  @Field(() => Int, { nullable: true }) completionTokens!: number | null;
  @Field(() => Int, { nullable: true }) cacheReadTokens!: number | null;
  @Field(() => Int, { nullable: true }) cacheWriteTokens!: number | null;
  @Field(() => Int, { nullable: true }) totalTokens!: number | null;
  @Field(() => String, { nullable: true }) cacheHitRatio!: string | null;
  @Field(() => String) amountUsd!: string;
  @Field(() => String, { nullable: true }) officialCostUsd!: string | null;
  @Field(() => String, { nullable: true }) savedUsd!: string | null;
  /** Internal: resolved into `apiKey` through the request's loader. */
  apiKeyId!: string | null;
}

@ObjectType({ description: 'Totals over a set of usage events; savings compare with official list prices where known.' })
export class UsageTotals {
  @Field(() => Int) requests!: number;
  @Field(() => String) spendUsd!: string;
  @Field(() => String) avgCostPerRequestUsd!: string;
  @Field(() => Int) inputTokens!: number;
  @Field(() => Int) outputTokens!: number;
  @Field(() => Int) cacheReadTokens!: number;
  @Field(() => Int) cacheWriteTokens!: number;
  @Field(() => String) gatewayCostUsd!: string;
  @Field(() => String) officialCostUsd!: string;
  @Field(() => String) savedUsd!: string;
  @Field(() => String) savedPercent!: string;
  @Field(() => Int) comparableRequests!: number;
}

@ObjectType()
export class UsageBreakdown {
  @Field(() => String, { description: 'A model id or a route group id.' }) key!: string;
  @Field(() => String) label!: string;
  @Field(() => UsageTotals) totals!: UsageTotals;
}

@ObjectType()
export class UsageSummary {
  @Field(() => UsageTotals) totals!: UsageTotals;
  @Field(() => [UsageBreakdown]) byModel!: UsageBreakdown[];
  @Field(() => [UsageBreakdown]) byGroup!: UsageBreakdown[];
}

@ObjectType()
export class UsagePoint {
  @Field(() => DateTimeISOResolver) ts!: Date;
  @Field(() => Int) requests!: number;
  @Field(() => String) spendUsd!: string;
  @Field(() => Int) inputTokens!: number;
  @Field(() => Int) outputTokens!: number;
  @Field(() => Int) cacheReadTokens!: number;
  @Field(() => Int) cacheWriteTokens!: number;
}

@ObjectType()
export class UsageTimeseries {
  @Field(() => String) bucket!: string;
  @Field(() => DateTimeISOResolver) from!: Date;
  @Field(() => DateTimeISOResolver) to!: Date;
  @Field(() => [UsagePoint]) points!: UsagePoint[];
}

@ObjectType()
export class LeaderboardEntry {
  @Field(() => Int) rank!: number;
  @Field(() => String, { description: 'A masked user name.' }) user!: string;
  @Field(() => Int) tokens!: number;
  @Field(() => String, { nullable: true }) savedUsd!: string | null;
  @Field(() => Boolean) isMe!: boolean;
}

@ObjectType({ description: "Today's ranking by total tokens, in the operator's time zone." })
export class DailyLeaderboard {
  @Field(() => String) date!: string;
  @Field(() => String) timezone!: string;
  @Field(() => String) prize!: string;
  @Field(() => Int) totalTokens!: number;
  @Field(() => String) totalSavedUsd!: string;
  @Field(() => [LeaderboardEntry]) items!: LeaderboardEntry[];
  @Field(() => LeaderboardEntry, { nullable: true }) me!: LeaderboardEntry | null;
}
