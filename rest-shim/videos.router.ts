import { Router } from 'express';
import { authed } from './handler.js';
import { sendStoredObject } from './v1/ranges.js';

/**
 * The finished MP4 of one of the caller's video tasks for the signed-in cabinet: the same object and
 * the same Range support as GET /v1/videos/{task_id}/content, authenticated by the session (a `<video>`
 * element sends the cookie, never an API key).
 */
export function videosRouter(): Router {
  const router = Router();
  router.get('/:task_id/content', authed(async (actor, ctx, req, res) => {
    const { object, task } = await ctx.services.video.content(actor.userId, String(req.params.task_id));
    await sendStoredObject(req, res, object, { etag: `"${task.id}"`, lastModified: task.completedAt ?? undefined, filename: `${task.id}.mp4` });
  }));
  return router;
}
