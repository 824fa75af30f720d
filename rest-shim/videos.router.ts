import { Router, type Request, type Response } from 'express';
import type { Services } from '../src/services.js';
import { authed } from './handler.js';
import { sendStoredObject } from './v1/ranges.js';

/** A finished video task's MP4, with Range support: for /v1 (API key) and for the cabinet (session) alike. */
export async function sendVideoContent(services: Services, userId: string, taskId: string, req: Request, res: Response): Promise<void> {
  const { object, task } = await services.video.content(userId, taskId);
  await sendStoredObject(req, res, object, { etag: `"${task.id}"`, lastModified: task.completedAt ?? undefined, filename: `${task.id}.mp4` });
}

/**
 * The finished MP4 of one of the caller's video tasks for the signed-in cabinet: the same object and
 * the same Range support as GET /v1/videos/{task_id}/content, authenticated by the session (a `<video>`
 * element sends the cookie, never an API key).
 */
export function videosRouter(): Router {
  const router = Router();
  router.get('/:task_id/content', authed((actor, ctx, req, res) => sendVideoContent(ctx.services, actor.userId, String(req.params.task_id), req, res)));
  return router;
}
