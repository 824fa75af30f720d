import { z } from 'zod';
import { announcementIdInput, createAnnouncementInput, listAnnouncementsInput, updateAnnouncementInput } from '../../announcements/announcements.schemas.js';
import { authedProcedure, optionalServiceInput, router, serviceInput } from '../trpc.js';

/** An announcement by id: the service's own id field, named `id` on this surface. */
const byId = z.object({ id: announcementIdInput.shape.announcementId });
const updateInput = updateAnnouncementInput.extend(byId.shape);

/** Announcements for signed-in users, and the operator's procedures (FORBIDDEN for non-admins). */
export const announcementsRouter = router({
  list: authedProcedure.input(optionalServiceInput(listAnnouncementsInput)).query(({ ctx, input }) => ctx.services.announcements.list(ctx.actor, input ?? {})),
  markRead: authedProcedure.input(serviceInput(byId)).mutation(({ ctx, input }) => ctx.services.announcements.markRead(ctx.actor, input?.id)),
  markAllRead: authedProcedure.mutation(({ ctx }) => ctx.services.announcements.markAllRead(ctx.actor)),

  adminList: authedProcedure.query(({ ctx }) => ctx.services.announcements.adminList(ctx.actor)),
  adminCreate: authedProcedure.input(serviceInput(createAnnouncementInput)).mutation(({ ctx, input }) => ctx.services.announcements.create(ctx.actor, input)),
  adminUpdate: authedProcedure.input(serviceInput(updateInput)).mutation(({ ctx, input }) => {
    const { id, ...changes } = input ?? { id: undefined };
    return ctx.services.announcements.update(ctx.actor, id, changes);
  }),
  adminPublish: authedProcedure.input(serviceInput(byId)).mutation(({ ctx, input }) => ctx.services.announcements.publish(ctx.actor, input?.id)),
  adminUnpublish: authedProcedure.input(serviceInput(byId)).mutation(({ ctx, input }) => ctx.services.announcements.unpublish(ctx.actor, input?.id)),
});
