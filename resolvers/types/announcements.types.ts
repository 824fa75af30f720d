import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';

@ObjectType({ description: 'A published announcement in one language, with the signed-in user’s read state.' })
export class Announcement {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'Plain text.' })
  title!: string;

  @Field(() => String, { description: 'Plain text; line breaks are significant, markup is not.' })
  body!: string;

  @Field(() => String, { description: '`ru` or `en`.' })
  language!: string;

  @Field(() => DateTimeISOResolver)
  publishedAt!: Date;

  @Field(() => Boolean)
  read!: boolean;
}

@ObjectType()
export class AnnouncementList {
  @Field(() => [Announcement], { description: 'Newest first (at most 200).' })
  items!: Announcement[];

  @Field(() => Int, { description: 'Published announcements the user has not read.' })
  unreadCount!: number;
}

@ObjectType()
export class AnnouncementReadState {
  @Field(() => ID)
  id!: string;

  @Field(() => Boolean)
  read!: boolean;
}

@ObjectType({ description: 'An announcement as the operator sees it: both languages and its publication state.' })
export class AdminAnnouncement {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  titleRu!: string;

  @Field(() => String)
  titleEn!: string;

  @Field(() => String)
  bodyRu!: string;

  @Field(() => String)
  bodyEn!: string;

  @Field(() => Boolean)
  published!: boolean;

  @Field(() => DateTimeISOResolver, { nullable: true })
  publishedAt!: Date | null;

  @Field(() => ID, { nullable: true })
  createdBy!: string | null;

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;

  @Field(() => DateTimeISOResolver)
  updatedAt!: Date;
}

@InputType()
export class CreateAnnouncementInput {
  @Field(() => String, { description: 'Plain text, one line, 1 to 200 characters.' })
  titleRu!: string;

  @Field(() => String, { description: 'Plain text, one line, 1 to 200 characters.' })
  titleEn!: string;

  @Field(() => String, { description: 'Plain text, 1 to 10000 characters.' })
  bodyRu!: string;

  @Field(() => String, { description: 'Plain text, 1 to 10000 characters.' })
  bodyEn!: string;

  @Field(() => Boolean, { nullable: true, description: 'Publish at once; default false (a draft).' })
  publish?: boolean | null;
}

@InputType({ description: 'Absent fields keep their text.' })
export class UpdateAnnouncementInput {
  @Field(() => String, { nullable: true })
  titleRu?: string | null;

  @Field(() => String, { nullable: true })
  titleEn?: string | null;

  @Field(() => String, { nullable: true })
  bodyRu?: string | null;

  @Field(() => String, { nullable: true })
  bodyEn?: string | null;
}
