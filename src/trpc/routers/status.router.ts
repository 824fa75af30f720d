import { publicProcedure, router } from '../trpc.js';

export const statusRouter = router({
  /** The public status page: public groups with status, uptime, and their models' status and history. */
  get: publicProcedure.query(({ ctx }) => ctx.services.status.get()),
});
