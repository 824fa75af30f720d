import { Router, type Request, type Response } from 'express';
import type { Services } from '../src/services.js';
import { authed } from './handler.js';
import { routes, serve } from './route.js';
import { sendStoredObject } from './v1/ranges.js';

/** A finished video task's MP4, with Range support: for /v1 (API key) and for the cabinet (session) alike. */
export async function sendVideoContent(services: Services, userId: string, taskId: string, req: Request, res: Response): Promise<void> {
  const { object, task } = await services.video.content(userId, taskId);
  await sendStoredObject(req, res, object, { etag: `"${task.id}"`, lastModified: task.completedAt ?? undefined, filename: `${task.id}.mp4` });
}

/** The MP4 answers of a finished video task: the whole file, or the asked range. */
export const MP4_ANSWERS = {
  200: { description: 'The MP4', media: 'video/mp4' },
  206: { description: 'The requested range of the MP4 (HTTP Range)', media: 'video/mp4' },
};

/**
 * The finished MP4 of one of the caller's video tasks for the signed-in cabinet: the same object and
 * the same Range support as GET /v1/videos/{task_id}/content, authenticated by the session (a `<video>`
 * element sends the cookie, never an API key).
 */
export const VIDEO_ROUTES = routes('/videos', 'videos', {
  content: { method: 'get', at: '/:task_id/content', summary: 'A finished video of the account (session; HTTP Range)', access: 'session', answers: MP4_ANSWERS },
});

export function videosRouter(): Router {
  const router = Router();
  serve(router, VIDEO_ROUTES.content, authed((actor, ctx, req, res) => sendVideoContent(ctx.services, actor.userId, String(req.params.task_id), req, res)));
  return router;
}
