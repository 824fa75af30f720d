import { createPubSub as createYogaPubSub } from '@graphql-yoga/subscription';

/** Domain events published by services and delivered to GraphQL subscriptions, keyed by owner id. */
export interface SessionEventPayload {
  kind: 'signed_in' | 'signed_out';
  sessionId: string;
  at: Date;
}

export type PubSubChannels = {
  SESSION_EVENTS: [userId: string, payload: SessionEventPayload];
};

export const Topics = { SessionEvents: 'SESSION_EVENTS' } as const;

export type PubSub = ReturnType<typeof createYogaPubSub<PubSubChannels>>;

/** In-process pub/sub; with several processes (REDIS_URL) the event target is shared through Redis. */
export function createPubSub(): PubSub {
  return createYogaPubSub<PubSubChannels>();
}
