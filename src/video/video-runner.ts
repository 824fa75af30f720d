import { hostname } from 'node:os';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { BillingService } from '../billing/billing.service.js';
import { upstreamCostUnits } from '../billing/cost.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { UpstreamClient } from '../upstreams/client.js';
import type { RouteCandidate, RouteTable } from '../upstreams/routes.js';
import { newId, randomSecret } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { formatUnits, formatUsd } from '../shared/money.js';
import type { PubSub } from '../shared/pubsub.js';
import type { VideoStorage } from '../storage/video-storage.js';
import type { UsageRecorder } from '../usage/usage-recorder.js';
import type { VideoSettings } from './video.config.js';
import { holdKey, publishTask, toView } from './video-task.js';
import { enqueueWebhookEvent } from '../events/outbox.js';
import { downloadVideo, pollVideo, submitVideo } from './video-upstream.js';
import type { VideoRepository, VideoTask, VideoTaskChanges, VideoTaskStatus } from './video.repository.js';

export interface VideoRunnerDeps {
  tasks: VideoRepository;
  catalog: CatalogService;
  billing: BillingService;
  routes: RouteTable;
  upstreams: UpstreamClient;
  storage: VideoStorage;
  recorder: UsageRecorder;
  pubsub: PubSub;
  log: Logger;
  settings: VideoSettings;
}

/**
 * The background side of video jobs: N loops per process, any number of processes. Each claims a due
 * task with a lease, submits it to a `video-jobs` upstream, polls it, stores the finished MP4 and
 * settles; every status change is a compare-and-set, and the ledger key `video:<task>` makes
 * settlement exactly-once even if a crashed worker's job is redone. Failures release the hold (zero charge).
 */
export class VideoRunner {
  private readonly owner = `${hostname()}:${process.pid}:${randomSecret(4)}`;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private wakeUp: (() => void)[] = [];

  constructor(private readonly deps: VideoRunnerDeps) {}

  /** Starts the runner loops of this process. */
  start(): void {
    this.stopping = false;
    for (let i = 0; i < this.deps.settings.workers; i++) this.loops.push(this.loop(`${this.owner}:${i}`));
  }

  /** Stops claiming; waits for the jobs being processed (their leases are released). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await Promise.all(this.loops);
    this.loops = [];
  }

  /** Ends the idle wait of every loop (a task was queued, or the runner stops). */
  wake(): void {
    const waiting = this.wakeUp;
    this.wakeUp = [];
    for (const resolve of waiting) resolve();
  }

  private async loop(owner: string): Promise<void> {
    while (!this.stopping) {
      let task: VideoTask | null = null;
      try {
        task = await this.claim(owner);
        if (task) await this.process(task, owner);
      } catch (error) {
        this.deps.log.error({ err: error, taskId: task?.id }, 'video runner step failed');
      }
      if (!task && !this.stopping) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.deps.settings.pollMs);
          this.wakeUp.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    }
  }

  /**
   * Claims one due job for `owner` until its lease ends; only jobs this process has a route for (a
   * process configured without that model, or without the upstream a job was submitted to, would only
   * postpone it).
   */
  private async claim(owner: string): Promise<VideoTask | null> {
    const served = this.deps.routes.served('video-jobs');
    if (!served.length) return null;
    return this.deps.tasks.claim(owner, this.deps.settings.leaseMs, served);
  }

  private async process(task: VideoTask, owner: string): Promise<void> {
    try {
      if (task.deadlineAt.getTime() <= Date.now()) {
        await this.fail(task, owner, 'timeout', 'The video was not generated in time; nothing was charged');
        return;
      }
      const route = this.routeOf(task);
      if (!route) {
        this.deps.log.error({ taskId: task.id, model: task.model }, 'no video upstream serves this model');
        await this.reschedule(task, owner, {});
        return;
      }
      if (!task.upstreamTaskId) {
        await this.submit(task, owner, route);
        return;
      }
      const state = await pollVideo(this.deps.upstreams, route.upstream, task.upstreamTaskId);
      if (state.status === 'failed') {
        this.deps.log.warn({ taskId: task.id, upstream: route.upstream.id, detail: state.error }, 'upstream video generation failed');
        await this.fail(task, owner, 'generation_failed', 'The video generation failed; nothing was charged');
      } else if (state.status === 'completed') {
        await this.complete(task, owner, route);
      } else {
        if (state.status === 'in_progress' && task.status === 'queued') await this.transition(task, owner, 'in_progress', { progress: state.progress });
        await this.reschedule(task, owner, { progress: state.progress });
      }
    } catch (error) {
      const failure = this.deps.upstreams.failureOf(error, task.upstreamId ?? 'unknown');
      this.deps.log.warn({ taskId: task.id, kind: failure.kind, detail: failure.detail }, 'video upstream call failed; will retry');
      if (!task.upstreamTaskId && !failure.retryable) {
        await this.fail(task, owner, 'upstream_rejected', 'The video request was refused by the model; nothing was charged');
      } else {
        await this.reschedule(task, owner, {}, Math.min(30_000, this.deps.settings.pollMs * 2 ** Math.min(5, task.attempts)));
      }
    }
  }

  /** Hands a task to its upstream (its inputs put back), then forgets the inputs. */
  private async submit(task: VideoTask, owner: string, route: RouteCandidate): Promise<void> {
    const spec = await this.deps.tasks.specWithInputs(task);
    if (!spec) {
      this.deps.log.error({ taskId: task.id }, 'video task inputs are missing');
      await this.fail(task, owner, 'generation_failed', 'The video generation failed; nothing was charged');
      return;
    }
    const upstreamTaskId = await submitVideo(this.deps.upstreams, route.upstream, route.upstreamModel, spec);
    this.deps.log.info({ taskId: task.id, upstream: route.upstream.id }, 'video submitted upstream');
    await this.reschedule(task, owner, { upstreamId: route.upstream.id, upstreamTaskId });
    // The upstream has them now; nothing reads them again.
    await this.deps.tasks.dropInputs(task.id);
  }

  private routeOf(task: VideoTask): RouteCandidate | null {
    const candidates = this.deps.routes.candidates(task.model, task.routeGroup).filter((r) => r.upstream.kind === 'video-jobs');
    // A submitted job stays with the upstream that has it.
    return task.upstreamId ? (candidates.find((r) => r.upstream.id === task.upstreamId) ?? null) : (candidates[0] ?? null);
  }

  /** Downloads and stores the MP4, settles exactly once (ledger key), then marks the task completed. */
  private async complete(task: VideoTask, owner: string, route: RouteCandidate): Promise<void> {
    const download = await downloadVideo(this.deps.upstreams, route.upstream, task.upstreamTaskId!);
    const { size } = await this.deps.storage.put(task.id, download.body, 'video/mp4', download.bytes);
    const settlement = await this.deps.billing.settle({
      requestId: holdKey(task.id),
      userId: task.userId,
      apiKeyId: task.apiKeyId,
      costUsd: task.costUsd,
      kind: 'video',
      provider: task.providerFamily,
      model: task.model,
      promptTokens: null,
      completionTokens: null,
    });
    // Only the worker whose compare-and-set wins records the event (the charge itself is exactly-once by its ledger key).
    if (await this.transition(task, owner, 'completed', { progress: 100, contentBytes: size })) {
      // What the upstream charges for it, by its own per-second price (unknown without one).
      const upstreamCost = upstreamCostUnits(route.upstream.prices[task.model], { seconds: task.seconds });
      this.record(task, 'success', null, task.costUsd, settlement.transactionId, { credentialId: route.credential.id, costUsd: upstreamCost === null ? null : formatUnits(upstreamCost) });
    }
  }

  private async fail(task: VideoTask, owner: string, code: string, message: string): Promise<void> {
    await this.deps.billing.release(holdKey(task.id));
    if (await this.transition(task, owner, 'failed', { errorCode: code, errorMessage: message })) this.record(task, 'error', code, '0', null);
  }

  /**
   * Moves an active task this worker holds to `status`. False when another worker (or an earlier life
   * of this one) already moved it, so side effects are not repeated.
   */
  private async transition(task: VideoTask, owner: string, status: VideoTaskStatus, changes: VideoTaskChanges): Promise<boolean> {
    // A finished task tells the account's webhooks in the transaction that moves it.
    const event = status === 'completed' ? 'video.completed' : status === 'failed' ? 'video.failed' : null;
    const tellWebhooks = event ? (tx: EntityManager, done: VideoTask) => enqueueWebhookEvent(tx, { userId: done.userId, type: event, data: { video: { ...toView(done) } } }) : undefined;
    const moved = await this.deps.tasks.transition(task.id, owner, status, changes, tellWebhooks);
    if (!moved) return false;
    task.status = moved.status;
    publishTask(this.deps.pubsub, moved);
    this.deps.log.info({ taskId: task.id, status }, `video task ${status}`);
    return true;
  }

  /** Frees the lease and sets when the job is next looked at. */
  private async reschedule(task: VideoTask, owner: string, changes: VideoTaskChanges, delayMs = this.deps.settings.pollMs): Promise<void> {
    await this.deps.tasks.reschedule(task.id, owner, changes, delayMs);
  }

  /** The usage event of a finished task; a settled charge is already in the ledger and is only linked. */
  private record(task: VideoTask, status: 'success' | 'error', errorCode: string | null, amountUsd: string, transactionId: string | null, upstream: { credentialId: string; costUsd: string | null } | null = null): void {
    const catalog = this.deps.catalog.snapshot;
    const now = new Date();
    this.deps.recorder.record({
      id: newId(),
      userId: task.userId,
      apiKeyId: task.apiKeyId,
      requestId: task.requestId,
      clientSurface: 'api',
      createdAt: new Date(task.createdAt),
      completedAt: now,
      providerFamily: task.providerFamily,
      routeGroup: task.routeGroup,
      routeGroupLabel: catalog.groups.get(task.routeGroup)?.label ?? task.routeGroup,
      endpoint: '/v1/videos',
      model: task.model,
      status,
      errorCode,
      latencyMs: now.getTime() - task.createdAt.getTime(),
      promptTokens: null,
      completionTokens: null,
      cacheReadTokens: null,
      cacheWriteTokens: null,
      totalTokens: null,
      cacheHitRatio: null,
      publicInputUsdPer1m: '0',
      publicOutputUsdPer1m: '0',
      publicCacheReadUsdPer1m: null,
      publicCacheWriteUsdPer1m: null,
      // A video is one generation; its price is what this task costs (per second x seconds, or per generation).
      publicRequestUsdPerGeneration: formatUsd(task.costUsd),
      amountUsd: formatUsd(amountUsd),
      officialCostUsd: null,
      savedUsd: null,
      upstreamId: task.upstreamId,
      upstreamCredentialId: upstream?.credentialId ?? null,
      upstreamCostUsd: upstream?.costUsd ?? null,
      transactionId,
    });
  }
}
