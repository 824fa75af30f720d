import { router } from './trpc.js';
import { accountsRouter } from './routers/accounts.router.js';
import { adminRouter } from './routers/admin.router.js';
import { catalogRouter } from './routers/catalog.router.js';
import { keysRouter } from './routers/keys.router.js';
import { announcementsRouter } from './routers/announcements.router.js';
import { statusRouter } from './routers/status.router.js';
import { usageRouter } from './routers/usage.router.js';
import { paymentsRouter } from './routers/payments.router.js';
import { operationsRouter } from './routers/operations.router.js';
import { upstreamsRouter } from './routers/upstreams.router.js';
import { alertsRouter } from './routers/alerts.router.js';
import { webhooksRouter } from './routers/webhooks.router.js';
import { organizationsRouter } from './routers/organizations.router.js';

export const appRouter = router({
  accounts: accountsRouter,
  keys: keysRouter,
  catalog: catalogRouter,
  admin: adminRouter,
  usage: usageRouter,
  status: statusRouter,
  announcements: announcementsRouter,
  payments: paymentsRouter,
  operations: operationsRouter,
  upstreams: upstreamsRouter,
  alerts: alertsRouter,
  webhooks: webhooksRouter,
  organizations: organizationsRouter,
});

/** Imported (as a type only) by TypeScript front ends and by the tests' tRPC client. */
export type AppRouter = typeof appRouter;
