import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DateTimeISOResolver } from 'graphql-scalars';

export enum VideoTaskStatus {
  queued = 'queued',
  in_progress = 'in_progress',
  completed = 'completed',
  failed = 'failed',
}
registerEnumType(VideoTaskStatus, { name: 'VideoTaskStatus', description: 'SPEC.md section 3: queued -> in_progress -> completed | failed.' });

@ObjectType({ description: 'Why a video task failed, in the gateway’s own words (nothing was charged).' })
export class VideoTaskError {
  @Field(() => String)
  code!: string;

  @Field(() => String)
  message!: string;
}

@ObjectType({ description: 'A video generation job of the signed-in account.' })
export class VideoTask {
  @Field(() => ID)
  id!: string;

  @Field(() => VideoTaskStatus)
  status!: VideoTaskStatus;

  @Field(() => String)
  model!: string;

  @Field(() => Int)
  seconds!: number;

  @Field(() => Int, { description: 'Percent done, as the generator reports it.' })
  progress!: number;

  @Field(() => VideoTaskError, { nullable: true })
  error!: VideoTaskError | null;

  @Field(() => String, { nullable: true, description: 'Where the finished MP4 streams from (an API key is needed), when completed.' })
  contentUrl!: string | null;

  @Field(() => String, { nullable: true, description: 'The same MP4 for the signed-in cabinet (session cookie, Range supported), when completed.' })
  playbackUrl!: string | null;

  @Field(() => DateTimeISOResolver)
  createdAt!: Date;

  @Field(() => DateTimeISOResolver, { nullable: true })
  completedAt!: Date | null;
}
