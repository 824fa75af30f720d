import { hostname } from 'node:os';
import { z } from 'zod';
import type { MikroORM, PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { BillingService } from '../billing/billing.service.js';
import type { GroupPrices } from '../catalog/catalog.schemas.js';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { RouteTable } from '../upstreams/routes.js';
import { resolveModel } from '../inference/scope.js';
import type { UpstreamClient } from '../upstreams/client.js';
import type { KeyPrincipal } from '../keys/keys.service.js';
import { DomainError } from '../shared/errors.js';
import { newId, randomSecret } from '../shared/ids.js';
import type { Logger } from '../shared/logging.js';
import { formatUnits, formatUsd } from '../shared/money.js';
import { upstreamCostUnits } from '../billing/cost.js';
import { intParam, parseInput } from '../shared/validation.js';
import { Topics, type PubSub, type VideoTaskEventPayload } from '../shared/pubsub.js';
import type { StoredObject, VideoStorage } from '../storage/video-storage.js';
import type { UsageRecorder } from '../usage/usage-recorder.js';
import { dataUrlBytes, parseVideoRequest, videoCost, type VideoJobSpec, type VideoReference } from './video-request.js';
import { downloadVideo, pollVideo, submitVideo } from './video-upstream.js';

export type VideoTaskView = VideoTaskEventPayload;

const videoListQuery = z.strictObject({ limit: intParam(1, 100, 20) });

export interface VideoSettings {
  /** Runner loops in this process. */
  workers: number;
  /** How often a job's upstream is polled. */
  pollMs: number;
  /** How long a claimed job stays claimed; a crashed worker's jobs are picked up after this. */
  leaseMs: number;
  /** A job not finished by then fails and its hold is released. */
  deadlineMs: number;
}

interface TaskRow {
  id: string;
  user_id: string;
  api_key_id: string | null;
  request_id: string;
  model: string;
  provider_family: string;
  route_group: string;
  spec: StoredSpec;
  seconds: number;
  prices: GroupPrices;
  cost_usd: string;
  status: VideoTaskView['status'];
  progress: number;
  upstream_id: string | null;
  upstream_task_id: string | null;
  error_code: string | null;
  error_message: string | null;
  attempts: number;
  deadline_at: Date;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

/**
 * A job's spec as its row keeps it: a data: reference (up to megabytes) is `{url: null, input: n}`, its URL
 * in `video_task_inputs` (n = its position) until the upstream has it, so the row every poll and claim reads
 * stays small. http(s) references (at most 2,048 characters) stay inline.
 */
type StoredReference = Omit<VideoReference, 'url'> & { url: string | null; input?: number };
type StoredSpec = Omit<VideoJobSpec, 'references'> & { references: StoredReference[] };

/** The spec to store, and the inputs to store beside it. */
function splitInputs(spec: VideoJobSpec): { stored: StoredSpec; inputs: { position: number; url: string }[] } {
  const inputs: { position: number; url: string }[] = [];
  const references = spec.references.map((reference, position): StoredReference => {
    if (dataUrlBytes(reference.url) === null) return reference;
    inputs.push({ position, url: reference.url });
    return { ...reference, url: null, input: position };
  });
  return { stored: { ...spec, references }, inputs };
}

const ACTIVE = `status in ('queued', 'in_progress')`;
/** The hold (and ledger) key of a task: one per task, so a settlement can only ever apply once. */
const holdKey = (taskId: string) => `video:${taskId}`;

function toView(row: TaskRow): VideoTaskView {
  return {
    id: row.id,
    status: row.status,
    model: row.model,
    seconds: row.seconds,
    progress: row.progress,
    error: row.status === 'failed' ? { code: row.error_code ?? 'generation_failed', message: row.error_message ?? 'The video generation failed' } : null,
    createdAt: new Date(row.created_at),
    completedAt: row.completed_at ? new Date(row.completed_at) : null,
  };
}

/**
 * Video generation jobs (SPEC.md sections 3 and 4.7-4.8). Submission validates against the model's
 * catalog row, holds the exact cost (durable hold) and writes a queued row. The runner - N loops per
 * process, any number of processes - claims due rows with `FOR UPDATE SKIP LOCKED` and a lease,
 * submits to a `video-jobs` upstream, polls it, stores the finished MP4 and settles; every status
 * change is a compare-and-set, and the ledger key `video:<task>` makes settlement exactly-once even if
 * a crashed worker's job is redone. Failures release the hold (zero charge).
 */
export class VideoService {
  private readonly owner = `${hostname()}:${process.pid}:${randomSecret(4)}`;
  private stopping = false;
  private loops: Promise<void>[] = [];
  private wakeUp: (() => void)[] = [];

  constructor(
    private readonly deps: {
      orm: MikroORM;
      catalog: CatalogService;
      billing: BillingService;
      routes: RouteTable;
      upstreams: UpstreamClient;
      storage: VideoStorage;
      recorder: UsageRecorder;
      pubsub: PubSub;
      log: Logger;
      settings: VideoSettings;
    },
  ) {}

  private em() {
    return this.deps.orm.em.fork();
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
    const { stored, inputs } = splitInputs(spec);
    let row: TaskRow;
    try {
      // One statement: the task and its inputs are written together or not at all. Sent through the driver
      // with bound parameters: the ORM's execute inlines values into the SQL text, which costs seconds for
      // a data: URL of megabytes.
      const pool = await (this.deps.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
      const result = await pool.query<TaskRow>(
        `with task as (
           insert into video_tasks (id, user_id, api_key_id, request_id, model, provider_family, route_group, spec, seconds, prices, cost_usd, deadline_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::jsonb, $11, now() + ($12 * interval '1 millisecond')) returning *),
         inputs as (
           insert into video_task_inputs (task_id, position, url)
           select (select id from task), (e->>'position')::int, e->>'url' from jsonb_array_elements($13::jsonb) e)
         select * from task`,
        [id, principal.userId, principal.keyId, requestId, model.id, model.family, principal.routeGroup, JSON.stringify(stored), spec.seconds, JSON.stringify(prices), cost.toFixed(), settings.deadlineMs, JSON.stringify(inputs)],
      );
      row = result.rows[0]!;
    } catch (error) {
      await this.deps.billing.release(holdKey(id));
      throw error;
    }
    const view = toView(row);
    this.publish(row.user_id, view);
    this.deps.log.info({ taskId: id, model: model.id, seconds: spec.seconds, costUsd: formatUsd(cost) }, 'video task queued');
    this.wake();
    return view;
  }

  /** A task of the caller's account (any of its keys); someone else's or unknown is 404, so ids cannot be probed. */
  async get(userId: string, id: string): Promise<VideoTaskView> {
    return toView(await this.own(userId, id));
  }

  async list(userId: string, raw: { limit?: unknown } = {}): Promise<VideoTaskView[]> {
    const { limit } = parseInput(videoListQuery, raw);
    const rows = await this.em().execute<TaskRow[]>('select * from video_tasks where user_id = ? order by created_at desc, id desc limit ?', [userId, limit]);
    return rows.map(toView);
  }

  /** The finished MP4 of a completed task. */
  async content(userId: string, id: string): Promise<{ object: StoredObject; task: VideoTaskView }> {
    const row = await this.own(userId, id);
    if (row.status !== 'completed') throw new DomainError('conflict', `The video is not ready (status ${row.status})`, { reason: 'video_not_ready' });
    const object = await this.deps.storage.get(row.id);
    if (!object) {
      this.deps.log.error({ taskId: id }, 'completed video has no stored content');
      throw new DomainError('unavailable', 'The video content is temporarily unavailable', { retryAfterSeconds: 30, reason: 'content_unavailable' });
    }
    return { object, task: toView(row) };
  }

  private async own(userId: string, id: string): Promise<TaskRow> {
    const [row] = /^video_[0-9a-f]{32}$/.test(id) ? await this.em().execute<TaskRow[]>('select * from video_tasks where id = ? and user_id = ?', [id, userId]) : [];
    if (!row) throw new DomainError('not_found', 'No such video task', { reason: 'video_not_found' });
    return row;
  }

  // -------------------------------------------------------------------------------------------------
  // The runner

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

  private wake(): void {
    const waiting = this.wakeUp;
    this.wakeUp = [];
    for (const resolve of waiting) resolve();
  }

  private async loop(owner: string): Promise<void> {
    while (!this.stopping) {
      let task: TaskRow | null = null;
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
   * Claims one due job for `owner` until its lease ends; skips rows another worker holds, and jobs this
   * process has no route for (a process configured without that model, or without the upstream a job
   * was submitted to, would only postpone it).
   */
  private async claim(owner: string): Promise<TaskRow | null> {
    const served = this.deps.routes.served('video-jobs').map(({ group, model, upstreamId }) => ({ g: group, m: model, u: upstreamId }));
    if (!served.length) return null;
    const [row] = await this.em().execute<TaskRow[]>(
      `update video_tasks set lease_owner = ?, lease_until = now() + (? * interval '1 millisecond'), attempts = attempts + 1, updated_at = now()
        where id = (select id from video_tasks t
                     where ${ACTIVE} and next_run_at <= now() and (lease_until is null or lease_until < now())
                       and exists (select 1 from jsonb_to_recordset(?::jsonb) as r(g text, m text, u text)
                                    where r.g = t.route_group and r.m = t.model and (t.upstream_id is null or r.u = t.upstream_id))
                     order by next_run_at limit 1 for update skip locked)
        returning *`,
      [owner, this.deps.settings.leaseMs, JSON.stringify(served)],
    );
    return row ?? null;
  }

  private async process(task: TaskRow, owner: string): Promise<void> {
    try {
      if (new Date(task.deadline_at).getTime() <= Date.now()) {
        await this.fail(task, owner, 'timeout', 'The video was not generated in time; nothing was charged');
        return;
      }
      const route = this.routeOf(task);
      if (!route) {
        this.deps.log.error({ taskId: task.id, model: task.model }, 'no video upstream serves this model');
        await this.reschedule(task, owner, {});
        return;
      }
      if (!task.upstream_task_id) {
        const spec = await this.specWithInputs(task);
        if (!spec) {
          this.deps.log.error({ taskId: task.id }, 'video task inputs are missing');
          await this.fail(task, owner, 'generation_failed', 'The video generation failed; nothing was charged');
          return;
        }
        const upstreamTaskId = await submitVideo(this.deps.upstreams, route.upstream, route.upstreamModel, spec);
        this.deps.log.info({ taskId: task.id, upstream: route.upstream.id }, 'video submitted upstream');
        await this.reschedule(task, owner, { upstream_id: route.upstream.id, upstream_task_id: upstreamTaskId });
        // The upstream has them now; nothing reads them again.
        await this.em().execute('delete from video_task_inputs where task_id = ?', [task.id]);
        return;
      }
      const state = await pollVideo(this.deps.upstreams, route.upstream, task.upstream_task_id);
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
      const failure = this.deps.upstreams.failureOf(error, task.upstream_id ?? 'unknown');
      this.deps.log.warn({ taskId: task.id, kind: failure.kind, detail: failure.detail }, 'video upstream call failed; will retry');
      if (!task.upstream_task_id && !failure.retryable) {
        await this.fail(task, owner, 'upstream_rejected', 'The video request was refused by the model; nothing was charged');
      } else {
        await this.reschedule(task, owner, {}, Math.min(30_000, this.deps.settings.pollMs * 2 ** Math.min(5, task.attempts)));
      }
    }
  }

  /** The spec to submit, its stored inputs put back; null when one is missing. */
  private async specWithInputs(task: TaskRow): Promise<VideoJobSpec | null> {
    const stored = task.spec.references.filter((r) => r.input !== undefined);
    const urls = new Map<number, string>();
    if (stored.length) {
      const rows = await this.em().execute<{ position: number; url: string }[]>('select position, url from video_task_inputs where task_id = ?', [task.id]);
      for (const { position, url } of rows) urls.set(position, url);
    }
    const references: VideoReference[] = [];
    for (const { input, url, ...reference } of task.spec.references) {
      const resolved = input === undefined ? url : urls.get(input);
      if (resolved == null) return null;
      references.push({ ...reference, url: resolved });
    }
    return { ...task.spec, references };
  }

  private routeOf(task: TaskRow) {
    const candidates = this.deps.routes.candidates(task.model, task.route_group).filter((r) => r.upstream.kind === 'video-jobs');
    // A submitted job stays with the upstream that has it.
    return task.upstream_id ? (candidates.find((r) => r.upstream.id === task.upstream_id) ?? null) : (candidates[0] ?? null);
  }

  /** Downloads and stores the MP4, settles exactly once (ledger key), then marks the task completed. */
  private async complete(task: TaskRow, owner: string, route: NonNullable<ReturnType<VideoService['routeOf']>>): Promise<void> {
    const download = await downloadVideo(this.deps.upstreams, route.upstream, task.upstream_task_id!);
    const { size } = await this.deps.storage.put(task.id, download.body, 'video/mp4', download.bytes);
    const settlement = await this.deps.billing.settle({
      requestId: holdKey(task.id),
      userId: task.user_id,
      apiKeyId: task.api_key_id,
      costUsd: task.cost_usd,
      kind: 'video',
      provider: task.provider_family,
      model: task.model,
      promptTokens: null,
      completionTokens: null,
    });
    // Only the worker whose compare-and-set wins records the event (the charge itself is exactly-once by its ledger key).
    if (await this.transition(task, owner, 'completed', { progress: 100, content_bytes: size })) {
      // What the upstream charges for it, by its own per-second price (unknown without one).
      const upstreamCost = upstreamCostUnits(route.upstream.prices[task.model], { seconds: task.seconds });
      this.record(task, 'success', null, task.cost_usd, settlement.transactionId, { credentialId: route.credential.id, costUsd: upstreamCost === null ? null : formatUnits(upstreamCost) });
    }
  }

  private async fail(task: TaskRow, owner: string, code: string, message: string): Promise<void> {
    await this.deps.billing.release(holdKey(task.id));
    if (await this.transition(task, owner, 'failed', { error_code: code, error_message: message })) this.record(task, 'error', code, '0', null);
  }

  /**
   * Compare-and-set: moves an active task this worker holds to `status`. False when another worker
   * (or an earlier life of this one) already moved it, so side effects are not repeated.
   */
  private async transition(task: TaskRow, owner: string, status: VideoTaskView['status'], fields: Record<string, unknown>): Promise<boolean> {
    const final = status === 'completed' || status === 'failed';
    const sets = Object.keys(fields).map((f) => `${f} = ?`);
    // A task that ends drops its inputs in the same statement (one that failed before submission still has them).
    const [row] = await this.em().execute<TaskRow[]>(
      `with moved as (
         update video_tasks set status = ?, ${sets.length ? `${sets.join(', ')}, ` : ''}updated_at = now(),
                started_at = coalesce(started_at, case when ? in ('in_progress', 'completed') then now() end),
                completed_at = case when ? then now() else completed_at end,
                lease_owner = case when ? then null else lease_owner end, lease_until = case when ? then null else lease_until end
          where id = ? and ${ACTIVE} and status <> ? and lease_owner = ?
          returning *),
       dropped as (delete from video_task_inputs where ? and task_id in (select id from moved))
       select * from moved`,
      [status, ...Object.values(fields), status, final, final, final, task.id, status, owner, final],
    );
    if (!row) return false;
    task.status = row.status;
    this.publish(row.user_id, toView(row));
    this.deps.log.info({ taskId: task.id, status }, `video task ${status}`);
    return true;
  }

  /** Frees the lease and sets when the job is next looked at. */
  private async reschedule(task: TaskRow, owner: string, fields: Record<string, unknown>, delayMs = this.deps.settings.pollMs): Promise<void> {
    const sets = Object.keys(fields).map((f) => `${f} = ?`);
    await this.em().execute(
      `update video_tasks set ${sets.length ? `${sets.join(', ')}, ` : ''}lease_owner = null, lease_until = null, updated_at = now(),
              next_run_at = now() + (? * interval '1 millisecond')
        where id = ? and lease_owner = ?`,
      [...Object.values(fields), delayMs, task.id, owner],
    );
  }

  private publish(userId: string, view: VideoTaskView): void {
    this.deps.pubsub.publish(Topics.VideoTaskUpdated, userId, view);
  }

  /** The usage event of a finished task; a settled charge is already in the ledger and is only linked. */
  private record(task: TaskRow, status: 'success' | 'error', errorCode: string | null, amountUsd: string, transactionId: string | null, upstream: { credentialId: string; costUsd: string | null } | null = null): void {
    const catalog = this.deps.catalog.snapshot;
    const now = new Date();
    this.deps.recorder.record({
      id: newId(),
      userId: task.user_id,
      apiKeyId: task.api_key_id,
      requestId: task.request_id,
      clientSurface: 'api',
      createdAt: new Date(task.created_at),
      completedAt: now,
      providerFamily: task.provider_family,
      routeGroup: task.route_group,
      routeGroupLabel: catalog.groups.get(task.route_group)?.label ?? task.route_group,
      endpoint: '/v1/videos',
      model: task.model,
      status,
      errorCode,
      latencyMs: now.getTime() - new Date(task.created_at).getTime(),
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
      publicRequestUsdPerGeneration: formatUsd(task.cost_usd),
      amountUsd: formatUsd(amountUsd),
      officialCostUsd: null,
      savedUsd: null,
      upstreamId: task.upstream_id,
      upstreamCredentialId: upstream?.credentialId ?? null,
      upstreamCostUsd: upstream?.costUsd ?? null,
      transactionId,
    });
  }
}
