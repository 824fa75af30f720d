import {
  emailLinkConfirmInput,
  emailLinkStartInput,
  loginInput,
  messengerStatusQuery,
  messengerTokenInput,
  registerInput,
  resendVerificationInput,
  transactionsQuery,
  verifyEmailInput,
} from '../../accounts/accounts.schemas.js';
import { authedProcedure, optionalServiceInput, publicProcedure, router, serviceInput } from '../trpc.js';

export const accountsRouter = router({
  register: publicProcedure.input(serviceInput(registerInput)).mutation(async ({ ctx, input }) => {
    const signedIn = await ctx.services.accounts.register(ctx.caller, input);
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    return signedIn;
  }),
  login: publicProcedure.input(serviceInput(loginInput)).mutation(async ({ ctx, input }) => {
    const signedIn = await ctx.services.accounts.login(ctx.caller, input);
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    return signedIn;
  }),
  logout: authedProcedure.mutation(async ({ ctx }) => {
    await ctx.services.accounts.logout(ctx.actor);
    ctx.sessionCookie.clear();
    return { ok: true as const };
  }),
  me: authedProcedure.query(({ ctx }) => ctx.services.accounts.me(ctx.actor)),
  summary: authedProcedure.query(({ ctx }) => ctx.services.accounts.summary(ctx.actor)),
  transactions: authedProcedure
    .input(optionalServiceInput(transactionsQuery))
    .query(({ ctx, input }) => ctx.services.accounts.transactions(ctx.actor, input ?? {})),
  verifyEmail: authedProcedure.input(serviceInput(verifyEmailInput)).mutation(({ ctx, input }) => ctx.services.identity.verifyEmail(ctx.actor, input)),
  resendVerification: authedProcedure
    .input(optionalServiceInput(resendVerificationInput))
    .mutation(({ ctx, input }) => ctx.services.identity.resendVerification(ctx.actor, input ?? {})),
  startEmailLink: authedProcedure.input(serviceInput(emailLinkStartInput)).mutation(({ ctx, input }) => ctx.services.identity.startEmailLink(ctx.actor, input)),
  confirmEmailLink: authedProcedure.input(serviceInput(emailLinkConfirmInput)).mutation(({ ctx, input }) => ctx.services.identity.confirmEmailLink(ctx.actor, input)),
  links: authedProcedure.query(({ ctx }) => ctx.services.identity.links(ctx.actor)),
  messengerLinkStatus: authedProcedure.input(serviceInput(messengerStatusQuery)).query(({ ctx, input }) => ctx.services.identity.messengerLinkStatus(ctx.actor, input)),
  startMessengerLink: authedProcedure.mutation(({ ctx }) => ctx.services.identity.startMessengerLink(ctx.actor)),
  confirmMessengerLink: authedProcedure.input(serviceInput(messengerTokenInput)).mutation(({ ctx, input }) => ctx.services.identity.confirmMessengerLink(ctx.actor, input)),
  unlinkMessenger: authedProcedure.mutation(async ({ ctx }) => {
    await ctx.services.identity.unlinkMessenger(ctx.actor);
    return { ok: true as const };
  }),
});
