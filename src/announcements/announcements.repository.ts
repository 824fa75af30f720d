import type { MikroORM } from '@mikro-orm/postgresql';
import { newId } from '../shared/ids.js';

/** The announcements and announcement_reads tables. AnnouncementsService keeps the rules and the views. */
export interface AnnouncementRow {
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

export interface AnnouncementTexts {
  titleRu?: string;
  titleEn?: string;
  bodyRu?: string;
  bodyEn?: string;
}

const TEXT_COLUMNS = { titleRu: 'title_ru', titleEn: 'title_en', bodyRu: 'body_ru', bodyEn: 'body_en' } as const;

export class AnnouncementsRepository {
  constructor(private readonly orm: MikroORM) {}

  private em() {
    return this.orm.em.fork();
  }

  /** The newest `limit` published announcements with the user's read state; `unread_total` counts every published one. */
  published(userId: string, limit: number): Promise<(AnnouncementRow & { read: boolean; unread_total: string })[]> {
    // The window count runs before LIMIT, so unread_total covers every published announcement.
    return this.em().execute(
      `select a.*, r.user_id is not null as read, count(*) filter (where r.user_id is null) over () as unread_total
         from announcements a
         left join announcement_reads r on r.announcement_id = a.id and r.user_id = ?
        where a.published_at is not null
        order by a.published_at desc, a.seq desc
        limit ?`,
      [userId, limit],
    );
  }

  /** Marks a published announcement read (idempotent); false when there is no such published announcement. */
  async markRead(id: string, userId: string, at: Date): Promise<boolean> {
    const [row] = await this.em().execute<{ found: string }[]>(
      `with target as (select id from announcements where id = ? and published_at is not null),
            marked as (
              insert into announcement_reads (announcement_id, user_id, read_at)
              select id, ?, ?::timestamptz from target
              on conflict (announcement_id, user_id) do nothing
              returning 1)
       select (select count(*) from target) as found`,
      [id, userId, at],
    );
    return Boolean(row && Number(row.found) > 0);
  }

  /** Marks every published announcement read; returns how many were newly marked. */
  async markAllRead(userId: string, at: Date): Promise<number> {
    const rows = await this.em().execute<{ announcement_id: string }[]>(
      `insert into announcement_reads (announcement_id, user_id, read_at)
       select id, ?, ?::timestamptz from announcements where published_at is not null
       on conflict (announcement_id, user_id) do nothing
       returning announcement_id`,
      [userId, at],
    );
    return rows.length;
  }

  all(): Promise<AnnouncementRow[]> {
    return this.em().execute('select * from announcements order by created_at desc, seq desc');
  }

  async insert(texts: Required<AnnouncementTexts>, publishedAt: Date | null, createdBy: string, at: Date): Promise<AnnouncementRow> {
    const [row] = await this.em().execute<AnnouncementRow[]>(
      `insert into announcements (id, title_ru, title_en, body_ru, body_en, published_at, created_by, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?::timestamptz, ?, ?::timestamptz, ?::timestamptz) returning *`,
      [newId(), texts.titleRu, texts.titleEn, texts.bodyRu, texts.bodyEn, publishedAt, createdBy, at, at],
    );
    return row!;
  }

  /** Changes the given texts (with none given, reads the announcement). */
  async updateTexts(id: string, texts: AnnouncementTexts, at: Date): Promise<AnnouncementRow | undefined> {
    const changed = (Object.keys(TEXT_COLUMNS) as (keyof typeof TEXT_COLUMNS)[]).filter((field) => texts[field] !== undefined);
    const em = this.em();
    const [row] = changed.length
      ? await em.execute<AnnouncementRow[]>(`update announcements set ${changed.map((field) => `${TEXT_COLUMNS[field]} = ?`).join(', ')}, updated_at = ?::timestamptz where id = ? returning *`, [
          ...changed.map((field) => texts[field]),
          at,
          id,
        ])
      : await em.execute<AnnouncementRow[]>('select * from announcements where id = ?', [id]);
    return row;
  }

  /**
   * Publishes a draft at `at`; a published one keeps its date. Publication times only grow (at least a
   * microsecond past the newest), so two announcements published within one clock millisecond still
   * list in the order they were published.
   */
  async publish(id: string, at: Date): Promise<AnnouncementRow | undefined> {
    const [row] = await this.em().execute<AnnouncementRow[]>(
      `update announcements
          set published_at = coalesce(published_at, greatest(?::timestamptz, (select max(published_at) + interval '1 microsecond' from announcements))),
              updated_at = case when published_at is null then ?::timestamptz else updated_at end
        where id = ? returning *`,
      [at, at, id],
    );
    return row;
  }

  async unpublish(id: string, at: Date): Promise<AnnouncementRow | undefined> {
    const [row] = await this.em().execute<AnnouncementRow[]>(
      `update announcements
          set updated_at = case when published_at is not null then ?::timestamptz else updated_at end,
              published_at = null
        where id = ? returning *`,
      [at, id],
    );
    return row;
  }
}
