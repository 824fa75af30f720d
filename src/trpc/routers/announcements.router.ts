import { router } from '../trpc.js';

export const announcementsRouter = router({});
