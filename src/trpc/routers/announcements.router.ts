import type { CreateAnnouncementInput, ListAnnouncementsInput, UpdateAnnouncementInput } from '../../announcements/announcements.schemas.js';
import { authedProcedure, router, typedInput } from '../trpc.js';

/** Announcements for signed-in users, and the operator's procedures (FORBIDDEN for non-admins). */
export const announcementsRouter = router({
  list: authedProcedure.input(typedInput<ListAnnouncementsInput | undefined>()).query(({ ctx, input }) => ctx.services.announcements.list(ctx.actor, input ?? {})),
  markRead: authedProcedure.input(typedInput<{ id: string }>()).mutation(({ ctx, input }) => ctx.services.announcements.markRead(ctx.actor, input?.id)),
  markAllRead: authedProcedure.mutation(({ ctx }) => ctx.services.announcements.markAllRead(ctx.actor)),

  adminList: authedProcedure.query(({ ctx }) => ctx.services.announcements.adminList(ctx.actor)),
  adminCreate: authedProcedure.input(typedInput<CreateAnnouncementInput>()).mutation(({ ctx, input }) => ctx.services.announcements.create(ctx.actor, input)),
  adminUpdate: authedProcedure.input(typedInput<{ id: string } & UpdateAnnouncementInput>()).mutation(({ ctx, input }) => {
    const { id, ...changes } = input ?? ({} as { id: string });
    return ctx.services.announcements.update(ctx.actor, id, changes);
  }),
  adminPublish: authedProcedure.input(typedInput<{ id: string }>()).mutation(({ ctx, input }) => ctx.services.announcements.publish(ctx.actor, input?.id)),
  adminUnpublish: authedProcedure.input(typedInput<{ id: string }>()).mutation(({ ctx, input }) => ctx.services.announcements.unpublish(ctx.actor, input?.id)),
});
