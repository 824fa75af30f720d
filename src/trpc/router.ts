import { router } from './trpc.js';
import { accountsRouter } from './routers/accounts.router.js';

export const appRouter = router({
  accounts: accountsRouter,
});

/** Imported (as a type only) by TypeScript front ends and by the tests' tRPC client. */
export type AppRouter = typeof appRouter;
