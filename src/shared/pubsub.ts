import { createPubSub as createYogaPubSub } from '@graphql-yoga/subscription';

/** Domain events published by services and delivered to GraphQL subscriptions, keyed by owner id. */
export interface SessionEventPayload {
  kind: 'signed_in' | 'signed_out';
  sessionId: string;
  at: Date;
}

/** A video task as its owner sees it (see src/video). */
export interface VideoTaskEventPayload {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  model: string;
  seconds: number;
  progress: number;
  error: { code: string; message: string } | null;
  createdAt: Date;
  completedAt: Date | null;
}

export type PubSubChannels = {
  SESSION_EVENTS: [userId: string, payload: SessionEventPayload];
  VIDEO_TASK_UPDATED: [userId: string, payload: VideoTaskEventPayload];
};

export const Topics = { SessionEvents: 'SESSION_EVENTS', VideoTaskUpdated: 'VIDEO_TASK_UPDATED' } as const;

export type PubSub = ReturnType<typeof createYogaPubSub<PubSubChannels>>;

/** In-process pub/sub; with several processes (REDIS_URL) the event target is shared through Redis. */
export function createPubSub(): PubSub {
  return createYogaPubSub<PubSubChannels>();
}
