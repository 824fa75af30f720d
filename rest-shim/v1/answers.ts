import { z } from 'zod';
import type { KeyStatusView } from '../../src/accounts/key-status.js';
import type { VideoTaskView } from '../../src/video/video.service.js';
import { decimal } from '../answer-fields.js';

/** The answers /v1 builds itself (the inference answers are the formats' own), each typed by its schema. */

export const keyStatusAnswer = z
  .object({
    object: z.literal('api_key'),
    id: z.string(),
    provider_family: z.string(),
    route_group: z.string(),
    pricing_plan: z.string(),
    monthly_spend_cap: decimal.nullable(),
    month_spend_usd: decimal,
    account: z.object({ id: z.string(), username: z.string().nullable() }),
    balance_usd: decimal,
    available_usd: decimal,
    can_spend: z.boolean(),
  })
  .meta({ id: 'KeyStatus', description: 'GET /v1/me: the key’s identity and scope, its spend this month, and whether it can spend now.' });

export function keyStatusJson(status: KeyStatusView): z.infer<typeof keyStatusAnswer> {
  return {
    object: 'api_key',
    id: status.keyId,
    provider_family: status.providerFamily,
    route_group: status.routeGroup,
    pricing_plan: status.pricingPlan,
    monthly_spend_cap: status.monthlySpendCap,
    month_spend_usd: status.monthSpendUsd,
    account: { id: status.userId, username: status.username },
    balance_usd: status.balanceUsd,
    available_usd: status.availableUsd,
    can_spend: status.canSpend,
  };
}

export function videoPaths(id: string) {
  return { poll: `/v1/videos/${id}`, content: `/v1/videos/${id}/content` };
}

const videoStatus = z.enum(['queued', 'in_progress', 'completed', 'failed']);

export const videoCreatedAnswer = z
  .object({ id: z.string(), status: videoStatus, model: z.string(), seconds: z.int(), poll_url: z.string(), content_url: z.string() })
  .meta({ id: 'VideoTaskCreated', description: 'SPEC.md 4.7 creation response: poll the task at poll_url; the MP4 is at content_url once completed.' });

export function videoCreatedJson(task: VideoTaskView): z.infer<typeof videoCreatedAnswer> {
  return { id: task.id, status: task.status, model: task.model, seconds: task.seconds, poll_url: videoPaths(task.id).poll, content_url: videoPaths(task.id).content };
}

export const videoPollAnswer = z
  .object({
    id: z.string(),
    object: z.literal('video'),
    status: videoStatus,
    model: z.string(),
    seconds: z.int(),
    progress: z.number(),
    created_at: z.int().describe('Unix seconds'),
    completed_at: z.int().nullable().describe('Unix seconds'),
    content_url: z.string().optional().describe('When completed'),
    error: z.object({ code: z.string(), message: z.string() }).optional().describe('When failed (nothing is charged)'),
  })
  .meta({ id: 'VideoTask', description: 'SPEC.md 4.7 poll response: id, status, content_url when completed, error when failed (plus progress and times).' });

/** SPEC.md 4.7 poll response: id, status, content_url when completed, error when failed (plus progress and times). */
export function videoPollJson(task: VideoTaskView): z.infer<typeof videoPollAnswer> {
  return {
    id: task.id,
    object: 'video',
    status: task.status,
    model: task.model,
    seconds: task.seconds,
    progress: task.progress,
    created_at: Math.floor(task.createdAt.getTime() / 1000),
    completed_at: task.completedAt ? Math.floor(task.completedAt.getTime() / 1000) : null,
    ...(task.status === 'completed' ? { content_url: videoPaths(task.id).content } : {}),
    ...(task.error ? { error: task.error } : {}),
  };
}
