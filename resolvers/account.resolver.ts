import { Arg, Ctx, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import { Topics, type SessionEventPayload } from '../src/shared/pubsub.js';
import { domainInput } from './args.js';
import {
  Account,
  AccountSummary,
  AuthPayload,
  EmailLinkConfirmed,
  EmailLinkStarted,
  LoginInput,
  MessengerLinkConfirm,
  MessengerLinks,
  MessengerLinkStart,
  MessengerLinkStatus,
  OkPayload,
  RegisterInput,
  SessionEvent,
  SessionEventKind,
  Transaction,
} from './types/account.types.js';

/** Keeps only the arguments a client sent (absent optional args stay absent for the strict input schemas). */
function defined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

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
    return ctx.services.accounts.transactions(requireActor(ctx), domainInput({ limit }));
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

  @Mutation(() => Account, { description: 'Verifies the account’s e-mail with the 6-digit code sent to it.' })
  async verifyEmail(
    @Ctx() ctx: RequestContext,
    @Arg('code', () => String) code: string,
    @Arg('email', () => String, { nullable: true }) email?: string,
  ): Promise<Account> {
    return ctx.services.identity.verifyEmail(requireActor(ctx), defined({ code, email }) as { code: string });
  }

  @Mutation(() => OkPayload, { description: 'Sends a new verification code (throttled; always ok).' })
  async resendVerification(
    @Ctx() ctx: RequestContext,
    @Arg('email', () => String, { nullable: true }) email?: string,
    @Arg('language', () => String, { nullable: true, description: 'ru or en.' }) language?: string,
  ): Promise<OkPayload> {
    return ctx.services.identity.resendVerification(requireActor(ctx), defined({ email, language }) as { email?: string; language?: 'ru' | 'en' });
  }

  @Mutation(() => EmailLinkStarted, { description: 'Sends a code to link an e-mail to an account without one.' })
  async startEmailLink(
    @Ctx() ctx: RequestContext,
    @Arg('email', () => String) email: string,
    @Arg('language', () => String, { nullable: true, description: 'ru or en.' }) language?: string,
  ): Promise<EmailLinkStarted> {
    return ctx.services.identity.startEmailLink(requireActor(ctx), defined({ email, language }) as { email: string; language?: 'ru' | 'en' });
  }

  @Mutation(() => EmailLinkConfirmed)
  async confirmEmailLink(
    @Ctx() ctx: RequestContext,
    @Arg('email', () => String) email: string,
    @Arg('code', () => String) code: string,
    @Arg('password', () => String) password: string,
  ): Promise<EmailLinkConfirmed> {
    return ctx.services.identity.confirmEmailLink(requireActor(ctx), { email, code, password });
  }

  @Query(() => MessengerLinks, { description: 'The account’s messenger link and sign-in methods.' })
  async identityLinks(@Ctx() ctx: RequestContext): Promise<MessengerLinks> {
    return ctx.services.identity.links(requireActor(ctx));
  }

  @Query(() => MessengerLinkStatus)
  async messengerLinkStatus(@Ctx() ctx: RequestContext, @Arg('token', () => String) token: string): Promise<MessengerLinkStatus> {
    return ctx.services.identity.messengerLinkStatus(requireActor(ctx), { token });
  }

  @Mutation(() => MessengerLinkStart)
  async startMessengerLink(@Ctx() ctx: RequestContext): Promise<MessengerLinkStart> {
    return ctx.services.identity.startMessengerLink(requireActor(ctx));
  }

  @Mutation(() => MessengerLinkConfirm, { description: 'Confirms a token the messenger bot gave the signed-in user.' })
  async confirmMessengerLink(@Ctx() ctx: RequestContext, @Arg('token', () => String) token: string): Promise<MessengerLinkConfirm> {
    return ctx.services.identity.confirmMessengerLink(requireActor(ctx), { token });
  }

  @Mutation(() => Boolean, { description: 'Unlinks the messenger (refused when it is the only way to sign in).' })
  async unlinkMessenger(@Ctx() ctx: RequestContext): Promise<boolean> {
    await ctx.services.identity.unlinkMessenger(requireActor(ctx));
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
