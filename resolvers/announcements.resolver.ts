import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import type { AnnouncementLanguage, UpdateAnnouncementInput as UpdateAnnouncementData } from '../src/announcements/announcements.schemas.js';
import { domainInput } from './args.js';
import {
  AdminAnnouncement,
  AnnouncementList,
  AnnouncementReadState,
  CreateAnnouncementInput,
  UpdateAnnouncementInput,
} from './types/announcements.types.js';

@Resolver()
export class AnnouncementsResolver {
  @Query(() => AnnouncementList, { description: 'Published announcements, newest first, with the signed-in user’s read state.' })
  async announcements(
    @Ctx() ctx: RequestContext,
    @Arg('language', () => String, { nullable: true, description: '`ru` (default) or `en`.' }) language?: string | null,
  ): Promise<AnnouncementList> {
    return ctx.services.announcements.list(requireActor(ctx), domainInput({ language: language as AnnouncementLanguage | null | undefined }));
  }

  @Mutation(() => AnnouncementReadState, { description: 'Marks a published announcement read (idempotent); unknown or unpublished ids are NOT_FOUND.' })
  async markAnnouncementRead(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<AnnouncementReadState> {
    return ctx.services.announcements.markRead(requireActor(ctx), id);
  }

  @Mutation(() => Int, { description: 'Marks every published announcement read; returns how many were newly marked.' })
  async markAllAnnouncementsRead(@Ctx() ctx: RequestContext): Promise<number> {
    return (await ctx.services.announcements.markAllRead(requireActor(ctx))).marked;
  }

  @Query(() => [AdminAnnouncement], { description: 'Admin: every announcement, drafts included, newest first.' })
  async adminAnnouncements(@Ctx() ctx: RequestContext): Promise<AdminAnnouncement[]> {
    return ctx.services.announcements.adminList(requireActor(ctx));
  }

  @Mutation(() => AdminAnnouncement, { description: 'Admin: a new announcement in ru and en; a draft unless `publish` is true.' })
  async createAnnouncement(@Ctx() ctx: RequestContext, @Arg('input', () => CreateAnnouncementInput) input: CreateAnnouncementInput): Promise<AdminAnnouncement> {
    return ctx.services.announcements.create(requireActor(ctx), domainInput(input));
  }

  @Mutation(() => AdminAnnouncement, { description: 'Admin: edits an announcement’s texts.' })
  async updateAnnouncement(
    @Ctx() ctx: RequestContext,
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateAnnouncementInput) input: UpdateAnnouncementInput,
  ): Promise<AdminAnnouncement> {
    return ctx.services.announcements.update(requireActor(ctx), id, domainInput(input, 'titleRu', 'titleEn', 'bodyRu', 'bodyEn') as UpdateAnnouncementData);
  }

  @Mutation(() => AdminAnnouncement, { description: 'Admin: publishes an announcement (a published one keeps its date).' })
  async publishAnnouncement(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<AdminAnnouncement> {
    return ctx.services.announcements.publish(requireActor(ctx), id);
  }

  @Mutation(() => AdminAnnouncement, { description: 'Admin: hides an announcement from users; read state is kept.' })
  async unpublishAnnouncement(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<AdminAnnouncement> {
    return ctx.services.announcements.unpublish(requireActor(ctx), id);
  }
}
