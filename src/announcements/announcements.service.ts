import { requireAdmin } from '../shared/actor.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logging.js';
import type { Actor } from '../shared/actor.js';
import { DomainError } from '../shared/errors.js';
import { AnnouncementsRepository, type AnnouncementRow } from './announcements.repository.js';
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

/** The newest published announcements a list shows; older ones still count as unread until read. */
export const MAX_LISTED_ANNOUNCEMENTS = 200;

/**
 * Announcements (DESIGN.md Admin): admins write them in ru and en and publish or unpublish them;
 * signed-in users read the published ones in one language and mark them read. Read state is per
 * user and independent of language; it survives edits and unpublish/republish.
 */
export class AnnouncementsService {
  private readonly announcements: AnnouncementsRepository;

  constructor(protected readonly deps: { orm: MikroORM; clock: Clock; log: Logger }) {
    this.announcements = new AnnouncementsRepository(deps.orm);
  }

  /** Published announcements, newest first, in the requested language (default ru). */
  async list(actor: Actor, raw: ListAnnouncementsInput = {}): Promise<AnnouncementListView> {
    const { language } = parseInput(listAnnouncementsInput, raw ?? {});
    const rows = await this.announcements.published(actor.userId, MAX_LISTED_ANNOUNCEMENTS);
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
    if (!(await this.announcements.markRead(id, actor.userId, this.deps.clock.now()))) throw new DomainError('not_found', 'No such announcement');
    return { id, read: true };
  }

  /** Marks every published announcement read for the caller; returns how many were newly marked. */
  async markAllRead(actor: Actor): Promise<{ marked: number }> {
    return { marked: await this.announcements.markAllRead(actor.userId, this.deps.clock.now()) };
  }

  /** Admin: every announcement, drafts included, newest first. */
  async adminList(actor: Actor): Promise<AdminAnnouncementView[]> {
    requireAdmin(actor);
    return (await this.announcements.all()).map(toAdminView);
  }

  /** Admin: a new announcement, a draft unless `publish` is true. */
  async create(actor: Actor, raw: CreateAnnouncementInput): Promise<AdminAnnouncementView> {
    requireAdmin(actor);
    const input = parseInput(createAnnouncementInput, raw ?? {});
    const now = this.deps.clock.now();
    const row = await this.announcements.insert(input, input.publish ? now : null, actor.userId, now);
    this.deps.log.info({ announcementId: row.id, userId: actor.userId, published: Boolean(input.publish) }, 'announcement created');
    return toAdminView(row);
  }

  /** Admin: edits the texts; read state is kept. */
  async update(actor: Actor, announcementId: string, raw: UpdateAnnouncementInput): Promise<AdminAnnouncementView> {
    requireAdmin(actor);
    const { announcementId: id } = parseInput(announcementIdInput, { announcementId });
    const input = parseInput(updateAnnouncementInput, raw ?? {});
    const row = await this.announcements.updateTexts(id, input, this.deps.clock.now());
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
    const row = await this.announcements.publish(id, this.deps.clock.now());
    if (!row) throw new DomainError('not_found', 'No such announcement');
    this.deps.log.info({ announcementId: row.id, userId: actor.userId }, 'announcement published');
    return toAdminView(row);
  }

  /** Admin: hides an announcement from users again; their read state is kept for a later republish. */
  async unpublish(actor: Actor, announcementId: string): Promise<AdminAnnouncementView> {
    requireAdmin(actor);
    const { announcementId: id } = parseInput(announcementIdInput, { announcementId });
    const row = await this.announcements.unpublish(id, this.deps.clock.now());
    if (!row) throw new DomainError('not_found', 'No such announcement');
    this.deps.log.info({ announcementId: row.id, userId: actor.userId }, 'announcement unpublished');
    return toAdminView(row);
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
