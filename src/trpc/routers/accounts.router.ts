import type { LoginInput, RegisterInput, TransactionsQuery } from '../../accounts/accounts.schemas.js';
import { authedProcedure, publicProcedure, router, typedInput } from '../trpc.js';

export const accountsRouter = router({
  register: publicProcedure.input(typedInput<RegisterInput>()).mutation(async ({ ctx, input }) => {
    const signedIn = await ctx.services.accounts.register(ctx.caller, input);
    ctx.sessionCookie.set(signedIn.sessionToken, signedIn.expiresAt);
    return signedIn;
  }),
  login: publicProcedure.input(typedInput<LoginInput>()).mutation(async ({ ctx, input }) => {
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
    .input(typedInput<TransactionsQuery | undefined>())
    .query(({ ctx, input }) => ctx.services.accounts.transactions(ctx.actor, input ?? {})),
});
