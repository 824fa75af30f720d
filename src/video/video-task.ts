import { Topics, type PubSub, type VideoTaskEventPayload } from '../shared/pubsub.js';
import type { VideoTask } from './video.repository.js';

/** A task as its owner sees it: the API's answer and the payload of its update events. */
export type VideoTaskView = VideoTaskEventPayload;

/** The hold (and ledger) key of a task: one per task, so a settlement can only ever apply once. */
export const holdKey = (taskId: string) => `video:${taskId}`;

export function toView(task: VideoTask): VideoTaskView {
  return {
    id: task.id,
    status: task.status,
    model: task.model,
    seconds: task.seconds,
    progress: task.progress,
    error: task.status === 'failed' ? { code: task.errorCode ?? 'generation_failed', message: task.errorMessage ?? 'The video generation failed' } : null,
    createdAt: new Date(task.createdAt),
    completedAt: task.completedAt ? new Date(task.completedAt) : null,
  };
}

/** Tells the task's account (its subscriptions) what the task looks like now. */
export function publishTask(pubsub: PubSub, task: VideoTask, view: VideoTaskView = toView(task)): void {
  pubsub.publish(Topics.VideoTaskUpdated, task.userId, view);
}
