import { Router } from 'express';
import { z } from 'zod';
import type { AnnouncementListView } from '../src/announcements/announcements.service.js';
import { ANNOUNCEMENT_LANGUAGES, announcementIdInput, listAnnouncementsInput } from '../src/announcements/announcements.schemas.js';
import { timestamp } from './answer-fields.js';
import { authed, SpecNames, withInput } from './handler.js';
import { reply, routes, serve } from './route.js';

export const announcementListAnswer = z
  .object({
    items: z.array(z.object({ id: z.string(), title: z.string(), body: z.string(), language: z.enum(ANNOUNCEMENT_LANGUAGES), published_at: timestamp, read: z.boolean() })),
    unread_count: z.int(),
  })
  .meta({ id: 'AnnouncementList', description: 'SPEC.md 4.5 announcements (an open object): the published ones in one language, and the caller’s read state.' });

/** SPEC.md 4.5 announcements: an open object `{items, unread_count}` for the signed-in user. */
function announcementListJson(view: AnnouncementListView): z.infer<typeof announcementListAnswer> {
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
export const ANNOUNCEMENT_ROUTES = routes('/announcements', 'announcements', {
  list: {
    method: 'get',
    at: '/',
    summary: 'Published announcements and which of them the caller has read',
    access: 'session',
    query: new SpecNames(listAnnouncementsInput),
    answers: { 200: { description: 'Announcements', json: announcementListAnswer } },
  },
  readAll: { method: 'post', at: '/read-all', summary: 'Mark every announcement read', access: 'session', answers: { 200: { description: 'How many were marked', json: z.object({ ok: z.literal(true), marked: z.int() }) } } },
  read: {
    method: 'post',
    at: '/:announcement_id/read',
    summary: 'Mark one announcement read',
    access: 'session',
    params: new SpecNames(announcementIdInput),
    answers: { 200: { description: 'Marked', json: z.object({ ok: z.literal(true), id: z.string(), read: z.literal(true) }) } },
  },
});

export function announcementsRouter(): Router {
  const router = Router();
  const { list, readAll, read } = ANNOUNCEMENT_ROUTES;

  serve(router, list, authed(async (actor, ctx, req, res) => {
    const view = await withInput('query', list.query, req.query, (query) => ctx.services.announcements.list(actor, query));
    reply(res, list, 200, announcementListJson(view));
  }));

  serve(router, readAll, authed(async (actor, ctx, _req, res) => {
    const { marked } = await ctx.services.announcements.markAllRead(actor);
    reply(res, readAll, 200, { ok: true, marked });
  }));

  serve(router, read, authed(async (actor, ctx, req, res) => {
    const { id, read: marked } = await withInput('path', read.params, req.params, ({ announcementId }) => ctx.services.announcements.markRead(actor, announcementId));
    reply(res, read, 200, { ok: true, id, read: marked });
  }));

  return router;
}
