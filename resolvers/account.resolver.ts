import { Arg, Ctx, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import { Topics, type SessionEventPayload } from '../src/shared/pubsub.js';
import { Account, AccountSummary, AuthPayload, LoginInput, RegisterInput, SessionEvent, SessionEventKind, Transaction } from './types/account.types.js';

@Resolver()
export class AccountResolver {
  @Query(() => Account, { description: 'The signed-in account.' })
  async me(@Ctx() ctx: RequestContext): Promise<Account> {
    return ctx.services.accounts.me(requireActor(ctx));
  }

  @Query(() => AccountSummary)
  async accountSummary(@Ctx() ctx: RequestContext): Promise<AccountSummary> {
    return ctx.services.accounts.summary(requireActor(ctx));
  }

  @Query(() => [Transaction], { description: 'Newest ledger entries first.' })
  async transactions(
    @Ctx() ctx: RequestContext,
    @Arg('limit', () => Int, { nullable: true, description: '1 to 100, default 25.' }) limit?: number,
  ): Promise<Transaction[]> {
    return ctx.services.accounts.transactions(requireActor(ctx), { limit: limit ?? undefined });
  }

  @Mutation(() => AuthPayload)
  async register(@Ctx() ctx: RequestContext, @Arg('input', () => RegisterInput) input: RegisterInput): Promise<AuthPayload> {
    const signedIn = await ctx.services.accounts.register(ctx.caller, { ...input });
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    return signedIn;
  }

  @Mutation(() => AuthPayload)
  async login(@Ctx() ctx: RequestContext, @Arg('input', () => LoginInput) input: LoginInput): Promise<AuthPayload> {
    const signedIn = await ctx.services.accounts.login(ctx.caller, { ...input });
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    return signedIn;
  }

  @Mutation(() => Boolean, { description: 'Revokes the current session.' })
  async logout(@Ctx() ctx: RequestContext): Promise<boolean> {
    await ctx.services.accounts.logout(requireActor(ctx));
    ctx.sessionCookie.clear();
    return true;
  }

  @Subscription(() => SessionEvent, {
    description: 'Sign-ins and sign-outs on the subscriber’s account (a new device, a logout elsewhere).',
    topics: Topics.SessionEvents,
    topicId: ({ context }: { context: RequestContext }) => requireActor(context).userId,
  })
  sessionEvents(@Root() event: SessionEventPayload): SessionEvent {
    return { kind: event.kind as SessionEventKind, sessionId: event.sessionId, at: event.at };
  }
}
