import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';

export enum RouteHealthState {
  closed = 'closed',
  half_open = 'half_open',
  open = 'open',
  rate_limited = 'rate_limited',
  auth_failed = 'auth_failed',
}
registerEnumType(RouteHealthState, {
  name: 'RouteHealthState',
  description: 'closed: in use; open: taken out after failures (a probe after its cool-down); half_open: a probe may go; rate_limited: paused by the upstream’s retry-after; auth_failed: the upstream refused the credential (401/403).',
});

@ObjectType({ description: 'Admin: one upstream credential as routing sees it in the answering process.' })
export class CredentialHealth {
  @Field(() => ID) upstreamId!: string;
  @Field(() => ID) credentialId!: string;
  @Field(() => String) label!: string;
  @Field(() => RouteHealthState) state!: RouteHealthState;
  @Field(() => DateTimeISOResolver, { nullable: true, description: 'When an open or paused state ends.' }) until!: Date | null;
  @Field(() => Int) inFlight!: number;
  @Field(() => DateTimeISOResolver, { nullable: true }) lastFailureAt!: Date | null;
}

@ObjectType({ description: 'Admin: a change of an upstream credential’s routing state, as it happens.' })
export class UpstreamHealthChange {
  @Field(() => ID) upstreamId!: string;
  @Field(() => ID) credentialId!: string;
  @Field(() => RouteHealthState) state!: RouteHealthState;
  @Field(() => DateTimeISOResolver, { nullable: true }) until!: Date | null;
  @Field(() => DateTimeISOResolver) at!: Date;
}

@InputType()
export class UpstreamTestInput {
  @Field(() => ID) upstreamId!: string;
  @Field(() => ID) credentialId!: string;
  @Field(() => String, { nullable: true, description: 'A public model the upstream routes (default: its first route’s).' }) model?: string | null;
}

@ObjectType({ description: 'Admin: one minimal request sent through a credential (billed to nobody).' })
export class UpstreamTestResult {
  @Field(() => Boolean) ok!: boolean;
  @Field(() => Int, { nullable: true }) status!: number | null;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { description: 'ok, or timeout, connection, rate_limited, server_error, rejected, misconfigured.' }) outcome!: string;
  @Field(() => String, { nullable: true }) model!: string | null;
}

@ObjectType({ description: 'Admin: revenue, upstream cost and margin of one day, model, group or upstream. Exact decimal strings.' })
export class MarginRow {
  @Field(() => String) key!: string;
  @Field(() => Int) requests!: number;
  @Field(() => String) revenueUsd!: string;
  @Field(() => String) upstreamCostUsd!: string;
  @Field(() => String, { description: 'Revenue of the requests with a known upstream cost, minus that cost.' }) marginUsd!: string;
  @Field(() => Int, { description: 'Billed requests whose upstream has no price for them (cost unknown).' }) uncostedRequests!: number;
  @Field(() => String) uncostedRevenueUsd!: string;
}

@ObjectType()
export class MarginReport {
  @Field(() => DateTimeISOResolver) from!: Date;
  @Field(() => DateTimeISOResolver) to!: Date;
  @Field(() => MarginRow) totals!: MarginRow;
  @Field(() => [MarginRow]) byDay!: MarginRow[];
  @Field(() => [MarginRow]) byModel!: MarginRow[];
  @Field(() => [MarginRow]) byGroup!: MarginRow[];
  @Field(() => [MarginRow]) byUpstream!: MarginRow[];
}

@ObjectType({ description: 'Admin: an upstream’s usage of one model over a period, as its invoice would show it.' })
export class UpstreamUsageLine {
  @Field(() => ID) upstreamId!: string;
  @Field(() => String) model!: string;
  @Field(() => Int) requests!: number;
  @Field(() => Int, { description: 'Input tokens not read from or written to the cache.' }) inputTokens!: number;
  @Field(() => Int) cacheReadTokens!: number;
  @Field(() => Int) cacheWriteTokens!: number;
  @Field(() => Int) outputTokens!: number;
  @Field(() => Int) images!: number;
  @Field(() => String) costUsd!: string;
  @Field(() => Int) uncostedRequests!: number;
}
