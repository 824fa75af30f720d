import { z } from 'zod';
import type { MikroORM } from '@mikro-orm/postgresql';
import { resolveModel } from '../inference/scope.js';
import type { KeyPrincipal } from '../keys/keys.service.js';
import { DomainError } from '../shared/errors.js';
import { newId } from '../shared/ids.js';
import { formatUsd } from '../shared/money.js';
import { intParam, parseInput } from '../shared/validation.js';
import type { StoredObject } from '../storage/video-storage.js';
import { parseVideoRequest, videoCost } from './video-request.js';
import { VideoRunner, type VideoRunnerDeps } from './video-runner.js';
import { holdKey, publishTask, toView, type VideoTaskView } from './video-task.js';
import { VideoRepository, type VideoTask } from './video.repository.js';

export type { VideoSettings } from './video.config.js';
export type { VideoTaskView } from './video-task.js';

const videoListQuery = z.strictObject({ limit: intParam(1, 100, 20) });

/**
 * Video generation jobs (SPEC.md sections 3 and 4.7-4.8): the API. Submission validates against the
 * model's catalog row, holds the exact cost (durable hold) and writes a queued row; the runner
 * (video-runner.ts) takes it from there.
 */
export class VideoService {
  private readonly tasks: VideoRepository;
  private readonly runner: VideoRunner;

  constructor(
    /** The runner's dependencies (it is built here), and the database its repository reads. */
    private readonly deps: Omit<VideoRunnerDeps, 'tasks'> & { orm: MikroORM },
  ) {
    this.tasks = new VideoRepository(deps.orm);
    this.runner = new VideoRunner({ ...deps, tasks: this.tasks });
  }

  /** `POST /v1/videos`: validate, hold the cost, queue. */
  async submit(principal: KeyPrincipal, requestId: string, body: unknown): Promise<VideoTaskView> {
    const catalog = this.deps.catalog.snapshot;
    const modelId = typeof (body as { model?: unknown } | null)?.model === 'string' ? (body as { model: string }).model : '';
    if (!modelId) throw new DomainError('validation_failed', 'Request validation failed', { issues: [{ loc: ['model'], msg: 'Field required', type: 'missing' }] });
    const model = resolveModel(catalog, principal, '/v1/videos', modelId);
    const spec = parseVideoRequest(body, model);
    const prices = catalog.priceOf(model.id, principal.routeGroup, principal.pricingPlan);
    if (!prices) throw new DomainError('not_found', `The model ${model.id} has no price in this group`, { reason: 'model_not_found' });
    const cost = videoCost(spec, prices);

    const id = `video_${newId().replaceAll('-', '')}`;
    const { settings } = this.deps;
    // The hold outlives the job's deadline, so a job that is still being finished keeps its money reserved.
    await this.deps.billing.hold({ userId: principal.userId, apiKeyId: principal.keyId, requestId: holdKey(id), amountUsd: cost, ttlMs: settings.deadlineMs + 10 * 60_000 });
    let task: VideoTask;
    try {
      task = await this.tasks.insert({
        id,
        userId: principal.userId,
        apiKeyId: principal.keyId,
        requestId,
        model: model.id,
        providerFamily: model.family,
        routeGroup: principal.routeGroup,
        spec,
        prices,
        costUsd: cost.toFixed(),
        deadlineMs: settings.deadlineMs,
      });
    } catch (error) {
      await this.deps.billing.release(holdKey(id));
      throw error;
    }
    const view = toView(task);
    publishTask(this.deps.pubsub, task, view);
    this.deps.log.info({ taskId: id, model: model.id, seconds: spec.seconds, costUsd: formatUsd(cost) }, 'video task queued');
    this.runner.wake();
    return view;
  }

  /** A task of the caller's account (any of its keys); someone else's or unknown is 404, so ids cannot be probed. */
  async get(userId: string, id: string): Promise<VideoTaskView> {
    return toView(await this.own(userId, id));
  }

  async list(userId: string, raw: { limit?: unknown } = {}): Promise<VideoTaskView[]> {
    const { limit } = parseInput(videoListQuery, raw);
    const tasks = await this.tasks.listOf(userId, limit);
    return tasks.map(toView);
  }

  /** The finished MP4 of a completed task. */
  async content(userId: string, id: string): Promise<{ object: StoredObject; task: VideoTaskView }> {
    const task = await this.own(userId, id);
    if (task.status !== 'completed') throw new DomainError('conflict', `The video is not ready (status ${task.status})`, { reason: 'video_not_ready' });
    const object = await this.deps.storage.get(task.id);
    if (!object) {
      this.deps.log.error({ taskId: id }, 'completed video has no stored content');
      throw new DomainError('unavailable', 'The video content is temporarily unavailable', { retryAfterSeconds: 30, reason: 'content_unavailable' });
    }
    return { object, task: toView(task) };
  }

  private async own(userId: string, id: string): Promise<VideoTask> {
    // An id that cannot be a task's is not looked up.
    const task = /^video_[0-9a-f]{32}$/.test(id) ? await this.tasks.ownedBy(userId, id) : undefined;
    if (!task) throw new DomainError('not_found', 'No such video task', { reason: 'video_not_found' });
    return task;
  }

  /** Starts the runner loops of this process. */
  start(): void {
    this.runner.start();
  }

  /** Stops claiming; waits for the jobs being processed (their leases are released). */
  async stop(): Promise<void> {
    await this.runner.stop();
  }
}
