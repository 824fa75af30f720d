import { router } from '../trpc.js';

export const statusRouter = router({});
