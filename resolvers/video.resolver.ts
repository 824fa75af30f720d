import { Arg, Ctx, ID, Int, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requireActor, type RequestContext } from '../src/context.js';
import { Topics, type VideoTaskEventPayload } from '../src/shared/pubsub.js';
import { VideoTask, VideoTaskStatus } from './types/video.types.js';
import { domainInput } from './args.js';

function toVideoTask(view: VideoTaskEventPayload): VideoTask {
  return {
    ...view,
    status: view.status as VideoTaskStatus,
    contentUrl: view.status === 'completed' ? `/v1/videos/${view.id}/content` : null,
    playbackUrl: view.status === 'completed' ? `/videos/${view.id}/content` : null,
  };
}

@Resolver()
export class VideoResolver {
  @Query(() => VideoTask, { description: 'One of the signed-in account’s video tasks; unknown or foreign ids are NOT_FOUND.' })
  async videoTask(@Ctx() ctx: RequestContext, @Arg('id', () => ID) id: string): Promise<VideoTask> {
    return toVideoTask(await ctx.services.video.get(requireActor(ctx).userId, id));
  }

  @Query(() => [VideoTask], { description: 'The signed-in account’s video tasks, newest first (limit 1-100, default 20).' })
  async videoTasks(@Ctx() ctx: RequestContext, @Arg('limit', () => Int, { nullable: true }) limit?: number | null): Promise<VideoTask[]> {
    const views = await ctx.services.video.list(requireActor(ctx).userId, domainInput({ limit }));
    return views.map(toVideoTask);
  }

  @Subscription(() => VideoTask, {
    description: 'Every state change of the subscriber’s video tasks (queued, in_progress, completed, failed).',
    topics: Topics.VideoTaskUpdated,
    topicId: ({ context }: { context: RequestContext }) => requireActor(context).userId,
  })
  videoTaskUpdated(@Root() event: VideoTaskEventPayload): VideoTask {
    return toVideoTask(event);
  }
}
