import { requireAdmin } from '../shared/actor.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logging.js';
import type { Actor } from '../shared/actor.js';
import { DomainError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { parseInput } from '../shared/validation.js';
import {
  announcementIdInput,
  createAnnouncementInput,
  listAnnouncementsInput,
  updateAnnouncementInput,
  type AnnouncementLanguage,
  type CreateAnnouncementInput,
  type ListAnnouncementsInput,
  type UpdateAnnouncementInput,
} from './announcements.schemas.js';

/** A published announcement in one language, with the caller's read state. */
export interface AnnouncementView {
  id: string;
  title: string;
  body: string;
  language: AnnouncementLanguage;
  publishedAt: Date;
  read: boolean;
}

export interface AnnouncementListView {
  items: AnnouncementView[];
  /** Published announcements the caller has not read (all of them, not only the listed ones). */
  unreadCount: number;
}

/** The operator's view: both languages and the publication state. */
export interface AdminAnnouncementView {
  id: string;
  titleRu: string;
  titleEn: string;
  bodyRu: string;
  bodyEn: string;
  published: boolean;
  publishedAt: Date | null;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

interface AnnouncementRow {
  id: string;
  title_ru: string;
  title_en: string;
  body_ru: string;
  body_en: string;
  published_at: Date | string | null;
  created_by: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The newest published announcements a list shows; older ones still count as unread until read. */
export const MAX_LISTED_ANNOUNCEMENTS = 200;

/**
 * Announcements (DESIGN.md Admin): admins write them in ru and en and publish or unpublish them;
 * signed-in users read the published ones in one language and mark them read. Read state is per
 * user and independent of language; it survives edits and unpublish/republish.
 */
export class AnnouncementsService {
  constructor(protected readonly deps: { orm: MikroORM; clock: Clock; log: Logger }) {}

  /** Published announcements, newest first, in the requested language (default ru). */
  async list(actor: Actor, raw: ListAnnouncementsInput = {}): Promise<AnnouncementListView> {
    const { language } = parseInput(listAnnouncementsInput, raw ?? {});
    // The window count runs before LIMIT, so unread_total covers every published announcement.
    const rows = await this.em().execute<(AnnouncementRow & { read: boolean; unread_total: string })[]>(
      `select a.*, r.user_id is not null as read, count(*) filter (where r.user_id is null) over () as unread_total
         from announcements a
         left join announcement_reads r on r.announcement_id = a.id and r.user_id = ?
        where a.published_at is not null
        order by a.published_at desc, a.seq desc
        limit ?`,
      [actor.userId, MAX_LISTED_ANNOUNCEMENTS],
    );
    return {
      items: rows.map((row) => ({
        id: row.id,
        title: language === 'en' ? row.title_en : row.title_ru,
        body: language === 'en' ? row.body_en : row.body_ru,
        language,
        publishedAt: new Date(row.published_at!),
        read: Boolean(row.read),
      })),
      unreadCount: rows[0] ? Number(rows[0].unread_total) : 0,
    };
  }

  /** Marks one published announcement read for the caller (idempotent); 404 for unknown or unpublished ids. */
  async markRead(actor: Actor, announcementId: string): Promise<{ id: string; read: true }> {
    const { announcementId: id } = parseInput(announcementIdInput, { announcementId });
    const [row] = await this.em().execute<{ found: string }[]>(
      `with target as (select id from announcements where id = ? and published_at is not null),
            marked as (
              insert into announcement_reads (announcement_id, user_id, read_at)
              select id, ?, ?::timestamptz from target
              on conflict (announcement_id, user_id) do nothing
              returning 1)
       select (select count(*) from target) as found`,
      [id, actor.userId, this.deps.clock.now()],
    );
    if (!row || Number(row.found) === 0) throw new DomainError('not_found', 'No such announcement');
    return { id, read: true };
  }

  /** Marks every published announcement read for the caller; returns how many were newly marked. */
  async markAllRead(actor: Actor): Promise<{ marked: number }> {
    const rows = await this.em().execute<{ announcement_id: string }[]>(
      `insert into announcement_reads (announcement_id, user_id, read_at)
       select id, ?, ?::timestamptz from announcements where published_at is not null
       on conflict (announcement_id, user_id) do nothing
       returning announcement_id`,
      [actor.userId, this.deps.clock.now()],
    );
    return { marked: rows.length };
  }

  /** Admin: every announcement, drafts included, newest first. */
  async adminList(actor: Actor): Promise<AdminAnnouncementView[]> {
    requireAdmin(actor);
    const rows = await this.em().execute<AnnouncementRow[]>('select * from announcements order by created_at desc, seq desc');
    return rows.map(toAdminView);
  }

  /** Admin: a new announcement, a draft unless `publish` is true. */
  async create(actor: Actor, raw: CreateAnnouncementInput): Promise<AdminAnnouncementView> {
    requireAdmin(actor);
    const input = parseInput(createAnnouncementInput, raw ?? {});
    const now = this.deps.clock.now();
    const [row] = await this.em().execute<AnnouncementRow[]>(
      `insert into announcements (id, title_ru, title_en, body_ru, body_en, published_at, created_by, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?::timestamptz, ?, ?::timestamptz, ?::timestamptz) returning *`,
      [newId(), input.titleRu, input.titleEn, input.bodyRu, input.bodyEn, input.publish ? now : null, actor.userId, now, now],
    );
    this.deps.log.info({ announcementId: row!.id, userId: actor.userId, published: Boolean(input.publish) }, 'announcement created');
    return toAdminView(row!);
  }

  /** Admin: edits the texts; read state is kept. */
  async update(actor: Actor, announcementId: string, raw: UpdateAnnouncementInput): Promise<AdminAnnouncementView> {
    requireAdmin(actor);
    const { announcementId: id } = parseInput(announcementIdInput, { announcementId });
    const input = parseInput(updateAnnouncementInput, raw ?? {});
    const sets: string[] = [];
    const params: unknown[] = [];
    const columns = { titleRu: 'title_ru', titleEn: 'title_en', bodyRu: 'body_ru', bodyEn: 'body_en' } as const;
    for (const [field, column] of Object.entries(columns) as [keyof typeof columns, string][]) {
      const value = input[field];
      if (value !== undefined) (sets.push(`${column} = ?`), params.push(value));
    }
    const em = this.em();
    const [row] = sets.length
      ? await em.execute<AnnouncementRow[]>(`update announcements set ${sets.join(', ')}, updated_at = ?::timestamptz where id = ? returning *`, [
          ...params,
          this.deps.clock.now(),
          id,
        ])
      : await em.execute<AnnouncementRow[]>('select * from announcements where id = ?', [id]);
    if (!row) throw new DomainError('not_found', 'No such announcement');
    this.deps.log.info({ announcementId: row.id, userId: actor.userId }, 'announcement edited');
    return toAdminView(row);
  }

  /**
   * Admin: publishes a draft (now); publishing a published announcement keeps its date. Publication
   * times only grow (at least a microsecond past the newest), so two announcements published within
   * one clock millisecond still list in the order they were published.
   */
  async publish(actor: Actor, announcementId: string): Promise<AdminAnnouncementView> {
    requireAdmin(actor);
    const { announcementId: id } = parseInput(announcementIdInput, { announcementId });
    const [row] = await this.em().execute<AnnouncementRow[]>(
      `update announcements
          set published_at = coalesce(published_at, greatest(?::timestamptz, (select max(published_at) + interval '1 microsecond' from announcements))),
              updated_at = case when published_at is null then ?::timestamptz else updated_at end
        where id = ? returning *`,
      [this.deps.clock.now(), this.deps.clock.now(), id],
    );
    if (!row) throw new DomainError('not_found', 'No such announcement');
    this.deps.log.info({ announcementId: row.id, userId: actor.userId }, 'announcement published');
    return toAdminView(row);
  }

  /** Admin: hides an announcement from users again; their read state is kept for a later republish. */
  async unpublish(actor: Actor, announcementId: string): Promise<AdminAnnouncementView> {
    requireAdmin(actor);
    const { announcementId: id } = parseInput(announcementIdInput, { announcementId });
    const [row] = await this.em().execute<AnnouncementRow[]>(
      `update announcements
          set updated_at = case when published_at is not null then ?::timestamptz else updated_at end,
              published_at = null
        where id = ? returning *`,
      [this.deps.clock.now(), id],
    );
    if (!row) throw new DomainError('not_found', 'No such announcement');
    this.deps.log.info({ announcementId: row.id, userId: actor.userId }, 'announcement unpublished');
    return toAdminView(row);
  }

  private em() {
    return this.deps.orm.em.fork();
  }
}

function toAdminView(row: AnnouncementRow): AdminAnnouncementView {
  return {
    id: row.id,
    titleRu: row.title_ru,
    titleEn: row.title_en,
    bodyRu: row.body_ru,
    bodyEn: row.body_en,
    published: row.published_at !== null,
    publishedAt: row.published_at === null ? null : new Date(row.published_at),
    createdBy: row.created_by,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
