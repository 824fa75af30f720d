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

/**
 * A model in a public group, or a public group as a whole, changed status (see src/status). Public
 * data only: catalog ids and labels, never an upstream.
 */
export interface ServiceStatusChangedPayload {
  subject: 'model' | 'group';
  groupId: string;
  groupLabel: string;
  /** Null when the group as a whole changed. */
  modelId: string | null;
  modelLabel: string | null;
  status: 'active' | 'unavailable';
  /** `checking` when nothing had been observed before. */
  previousStatus: 'active' | 'unavailable' | 'checking';
  observedAt: Date;
}

/** An invoice as its owner sees it (see src/payments), published on every status change. */
export interface InvoiceEventPayload {
  id: string;
  method: string;
  amountRequested: string;
  currency: string;
  usdCredit: string;
  bonusRate: string;
  bonusUsd: string;
  status: 'pending' | 'paid' | 'expired' | 'cancelled' | 'failed';
  paymentUrl: string | null;
  createdAt: Date;
  updatedAt: Date;
  paidAt: Date | null;
}

/** A route's health changed (src/upstreams/health.ts): operator-only, delivered to admins' subscriptions. */
export interface UpstreamHealthChangedPayload {
  upstreamId: string;
  credentialId: string;
  state: 'closed' | 'open' | 'half_open' | 'rate_limited' | 'auth_failed';
  /** When an open or paused state ends; null when closed. */
  until: Date | null;
  at: Date;
}

export type PubSubChannels = {
  SESSION_EVENTS: [userId: string, payload: SessionEventPayload];
  VIDEO_TASK_UPDATED: [userId: string, payload: VideoTaskEventPayload];
  INVOICE_UPDATED: [userId: string, payload: InvoiceEventPayload];
  /** Not keyed: service status is public, every subscriber gets every change. */
  SERVICE_STATUS_CHANGED: [payload: ServiceStatusChangedPayload];
  /** Keyed by ADMIN_TOPIC: the subscription checks that its subscriber is an admin. */
  UPSTREAM_HEALTH_CHANGED: [audience: string, payload: UpstreamHealthChangedPayload];
};

/** The one key of operator-only topics. */
export const ADMIN_TOPIC = 'admin';

export const Topics = { SessionEvents: 'SESSION_EVENTS', VideoTaskUpdated: 'VIDEO_TASK_UPDATED', ServiceStatusChanged: 'SERVICE_STATUS_CHANGED', InvoiceUpdated: 'INVOICE_UPDATED', UpstreamHealthChanged: 'UPSTREAM_HEALTH_CHANGED' } as const;

export type PubSub = ReturnType<typeof createYogaPubSub<PubSubChannels>>;

/** In-process pub/sub; with several processes (REDIS_URL) the event target is shared through Redis. */
export function createPubSub(eventTarget?: EventTarget): PubSub {
  return createYogaPubSub<PubSubChannels>(eventTarget ? { eventTarget } : undefined);
}
