import { alertSettingsInput } from '../../events/alerts/alerts.schemas.js';
import { authedProcedure, router, serviceInput } from '../trpc.js';

/** The signed-in account's alerts (the same service as GraphQL's alertSettings / updateAlertSettings). */
export const alertsRouter = router({
  settings: authedProcedure.query(({ ctx }) => ctx.services.alerts.settingsOf(ctx.actor)),
  update: authedProcedure.input(serviceInput(alertSettingsInput)).mutation(({ ctx, input }) => ctx.services.alerts.update(ctx.actor, input)),
});
