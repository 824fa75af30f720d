import { router } from '../trpc.js';

export const usageRouter = router({});
