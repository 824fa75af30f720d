import { Arg, Ctx, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { requireActor, type RequestContext } from '../src/context.js';
import { requireAdmin } from '../src/shared/actor.js';
import { ADMIN_TOPIC, Topics, type UpstreamHealthChangedPayload } from '../src/shared/pubsub.js';
import { domainInput } from './args.js';
import { CredentialHealth, MarginReport, RouteHealthState, UpstreamHealthChange, UpstreamTestInput, UpstreamTestResult, UpstreamUsageLine } from './types/operations.types.js';

/** The operator's running business: routing's live state, the test action, revenue, cost and margin. Admins only. */
@Resolver()
export class OperationsResolver {
  @Query(() => [CredentialHealth], { description: 'Admin: every upstream credential’s routing state and requests in flight (in the answering process).' })
  adminUpstreamHealth(@Ctx() ctx: RequestContext): CredentialHealth[] {
    return ctx.services.upstreamOps.health(requireActor(ctx)).map((view) => ({ ...view, state: view.state as RouteHealthState }));
  }

  @Mutation(() => UpstreamTestResult, { description: 'Admin: sends one minimal request through a credential (billed to nobody) and answers its latency and outcome.' })
  async testUpstreamCredential(@Ctx() ctx: RequestContext, @Arg('input', () => UpstreamTestInput) input: UpstreamTestInput): Promise<UpstreamTestResult> {
    return ctx.services.upstreamOps.test(requireActor(ctx), { ...input });
  }

  @Query(() => MarginReport, { description: 'Admin: revenue, upstream cost and margin by day (UTC), model, group and upstream (default: the last 30 days).' })
  async adminMargin(
    @Ctx() ctx: RequestContext,
    @Arg('from', () => DateTimeISOResolver, { nullable: true }) from?: Date | null,
    @Arg('to', () => DateTimeISOResolver, { nullable: true }) to?: Date | null,
  ): Promise<MarginReport> {
    return ctx.services.margin.report(requireActor(ctx), domainInput({ from: from?.toISOString(), to: to?.toISOString() }));
  }

  @Query(() => [UpstreamUsageLine], { description: 'Admin: each upstream’s usage per model, as its invoice would show it, with the cost by its prices.' })
  async adminUpstreamUsage(
    @Ctx() ctx: RequestContext,
    @Arg('from', () => DateTimeISOResolver, { nullable: true }) from?: Date | null,
    @Arg('to', () => DateTimeISOResolver, { nullable: true }) to?: Date | null,
    @Arg('upstreamId', () => String, { nullable: true }) upstreamId?: string | null,
  ): Promise<UpstreamUsageLine[]> {
    return ctx.services.margin.upstreamUsage(requireActor(ctx), domainInput({ from: from?.toISOString(), to: to?.toISOString(), upstreamId }));
  }

  @Subscription(() => UpstreamHealthChange, {
    description: 'Admin: every change of an upstream credential’s routing state (a breaker opening or closing, a pause), as it happens.',
    topics: Topics.UpstreamHealthChanged,
    topicId: ({ context }: { context: RequestContext }) => {
      requireAdmin(requireActor(context));
      return ADMIN_TOPIC;
    },
  })
  upstreamHealthChanged(@Root() event: UpstreamHealthChangedPayload): UpstreamHealthChange {
    return { ...event, state: event.state as RouteHealthState };
  }
}
