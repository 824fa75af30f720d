import { Router } from 'express';
import type { AnnouncementListView } from '../src/announcements/announcements.service.js';
import type { AnnouncementLanguage } from '../src/announcements/announcements.schemas.js';
import { authed, from, SpecNames } from './handler.js';

const ANNOUNCEMENT_PATH = new SpecNames(['announcement_id']);

/** SPEC.md 4.5 announcements: an open object `{items, unread_count}` for the signed-in user. */
function announcementListJson(view: AnnouncementListView) {
  return {
    items: view.items.map((item) => ({
      id: item.id,
      title: item.title,
      body: item.body,
      language: item.language,
      published_at: item.publishedAt.toISOString(),
      read: item.read,
    })),
    unread_count: view.unreadCount,
  };
}

/** SPEC.md 4.5: published announcements in ru or en, and the caller's read state. */
export function announcementsRouter(): Router {
  const router = Router();

  router.get('/', authed(async (actor, ctx, req, res) => {
    const view = await from('query', () => ctx.services.announcements.list(actor, { language: req.query.language as AnnouncementLanguage | undefined }));
    res.json(announcementListJson(view));
  }));

  router.post('/read-all', authed(async (actor, ctx, _req, res) => {
    const { marked } = await ctx.services.announcements.markAllRead(actor);
    res.json({ ok: true, marked });
  }));

  router.post('/:announcement_id/read', authed(async (actor, ctx, req, res) => {
    const { id, read } = await from('path', () => ctx.services.announcements.markRead(actor, String(req.params.announcement_id)), ANNOUNCEMENT_PATH);
    res.json({ ok: true, id, read });
  }));

  return router;
}
