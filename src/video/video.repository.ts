import type { EntityManager, MikroORM, PostgreSqlConnection } from '@mikro-orm/postgresql';
import type { GroupPrices } from '../catalog/catalog.schemas.js';
import type { VideoTaskEventPayload } from '../shared/pubsub.js';
import { dataUrlBytes, type VideoJobSpec, type VideoReference } from './video-request.js';

export type VideoTaskStatus = VideoTaskEventPayload['status'];

/**
 * A job's spec as its row keeps it: a data: reference (up to megabytes) is `{url: null, input: n}`, its URL
 * in `video_task_inputs` (n = its position) until the upstream has it, so the row every poll and claim reads
 * stays small. http(s) references (at most 2,048 characters) stay inline.
 */
type StoredReference = Omit<VideoReference, 'url'> & { url: string | null; input?: number };
type StoredSpec = Omit<VideoJobSpec, 'references'> & { references: StoredReference[] };

/** The video_tasks table as PostgreSQL returns it; only this module reads it. */
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
  status: VideoTaskStatus;
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

/** A video task as the API and the runner see it. */
export interface VideoTask {
  id: string;
  userId: string;
  apiKeyId: string | null;
  requestId: string;
  model: string;
  providerFamily: string;
  routeGroup: string;
  /** The spec as stored; `VideoRepository.specWithInputs` gives the one to submit. */
  spec: StoredSpec;
  seconds: number;
  costUsd: string;
  status: VideoTaskStatus;
  progress: number;
  upstreamId: string | null;
  upstreamTaskId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** How many times the task was claimed. */
  attempts: number;
  deadlineAt: Date;
  createdAt: Date;
  completedAt: Date | null;
}

/** A task to insert: who and what it is (as a `VideoTask` names them), its full spec and prices. */
export interface NewVideoTask extends Pick<VideoTask, 'id' | 'userId' | 'apiKeyId' | 'requestId' | 'model' | 'providerFamily' | 'routeGroup' | 'costUsd'> {
  spec: VideoJobSpec;
  prices: GroupPrices;
  /** From now until the job fails unfinished. */
  deadlineMs: number;
}

/** What a worker may change on a task it holds, beside its status and lease. */
export interface VideoTaskChanges {
  progress?: number;
  upstreamId?: string;
  upstreamTaskId?: string;
  contentBytes?: number;
  errorCode?: string;
  errorMessage?: string;
}

/** A (group, model, upstream) this process can run jobs for. */
export interface ServedVideoRoute {
  group: string;
  model: string;
  upstreamId: string;
}

const COLUMNS: Record<keyof VideoTaskChanges, string> = {
  progress: 'progress',
  upstreamId: 'upstream_id',
  upstreamTaskId: 'upstream_task_id',
  contentBytes: 'content_bytes',
  errorCode: 'error_code',
  errorMessage: 'error_message',
};

const ACTIVE = `status in ('queued', 'in_progress')`;

/** `col = ?, ` for each change, in the caller's order, with their values. */
function assignments(changes: VideoTaskChanges): { sql: string; values: unknown[] } {
  const names = Object.keys(changes) as (keyof VideoTaskChanges)[];
  return { sql: names.map((name) => `${COLUMNS[name]} = ?, `).join(''), values: names.map((name) => changes[name]) };
}

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

function toTask(row: TaskRow): VideoTask {
  return {
    id: row.id,
    userId: row.user_id,
    apiKeyId: row.api_key_id,
    requestId: row.request_id,
    model: row.model,
    providerFamily: row.provider_family,
    routeGroup: row.route_group,
    spec: row.spec,
    seconds: row.seconds,
    costUsd: row.cost_usd,
    status: row.status,
    progress: row.progress,
    upstreamId: row.upstream_id,
    upstreamTaskId: row.upstream_task_id,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    attempts: row.attempts,
    deadlineAt: new Date(row.deadline_at),
    createdAt: new Date(row.created_at),
    completedAt: row.completed_at ? new Date(row.completed_at) : null,
  };
}

/**
 * The video_tasks and video_task_inputs tables. Plain SQL, no entity: a task is claimed with a lease
 * (`FOR UPDATE SKIP LOCKED`) and every status change is one compare-and-set statement, which a unit
 * of work (load, change, flush) cannot express.
 */
export class VideoRepository {
  constructor(private readonly orm: MikroORM) {}

  private em() {
    return this.orm.em.fork();
  }

  /** Writes a queued task and its data: inputs in one statement: both or neither. */
  async insert(task: NewVideoTask): Promise<VideoTask> {
    const { stored, inputs } = splitInputs(task.spec);
    // Sent through the driver with bound parameters: the ORM's execute inlines values into the SQL text,
    // which costs seconds for a data: URL of megabytes.
    const pool = await (this.orm.em.getConnection() as PostgreSqlConnection).getNativeClient();
    const result = await pool.query<TaskRow>(
      `with task as (
         insert into video_tasks (id, user_id, api_key_id, request_id, model, provider_family, route_group, spec, seconds, prices, cost_usd, deadline_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::jsonb, $11, now() + ($12 * interval '1 millisecond')) returning *),
       inputs as (
         insert into video_task_inputs (task_id, position, url)
         select (select id from task), (e->>'position')::int, e->>'url' from jsonb_array_elements($13::jsonb) e)
       select * from task`,
      [
        task.id,
        task.userId,
        task.apiKeyId,
        task.requestId,
        task.model,
        task.providerFamily,
        task.routeGroup,
        JSON.stringify(stored),
        task.spec.seconds,
        JSON.stringify(task.prices),
        task.costUsd,
        task.deadlineMs,
        JSON.stringify(inputs),
      ],
    );
    return toTask(result.rows[0]!);
  }

  async ownedBy(userId: string, id: string): Promise<VideoTask | undefined> {
    const [row] = await this.em().execute<TaskRow[]>('select * from video_tasks where id = ? and user_id = ?', [id, userId]);
    return row && toTask(row);
  }

  /** An account's newest tasks first. */
  async listOf(userId: string, limit: number): Promise<VideoTask[]> {
    const rows = await this.em().execute<TaskRow[]>('select * from video_tasks where user_id = ? order by created_at desc, id desc limit ?', [userId, limit]);
    return rows.map(toTask);
  }

  /**
   * Claims one due task for `owner` until its lease ends; skips rows another worker holds, and tasks no
   * route in `served` can run (a submitted task only on the upstream that has it).
   */
  async claim(owner: string, leaseMs: number, served: ServedVideoRoute[]): Promise<VideoTask | null> {
    const routes = served.map(({ group, model, upstreamId }) => ({ g: group, m: model, u: upstreamId }));
    const [row] = await this.em().execute<TaskRow[]>(
      `update video_tasks set lease_owner = ?, lease_until = now() + (? * interval '1 millisecond'), attempts = attempts + 1, updated_at = now()
        where id = (select id from video_tasks t
                     where ${ACTIVE} and next_run_at <= now() and (lease_until is null or lease_until < now())
                       and exists (select 1 from jsonb_to_recordset(?::jsonb) as r(g text, m text, u text)
                                    where r.g = t.route_group and r.m = t.model and (t.upstream_id is null or r.u = t.upstream_id))
                     order by next_run_at limit 1 for update skip locked)
        returning *`,
      [owner, leaseMs, JSON.stringify(routes)],
    );
    return row ? toTask(row) : null;
  }

  /** The spec to submit, its stored inputs put back; null when one is missing. */
  async specWithInputs(task: VideoTask): Promise<VideoJobSpec | null> {
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

  /** Deletes a task's stored inputs (once the upstream has them, nothing reads them again). */
  async dropInputs(taskId: string): Promise<void> {
    await this.em().execute('delete from video_task_inputs where task_id = ?', [taskId]);
  }

  /**
   * Compare-and-set: moves an active task `owner` holds to `status` and returns it moved; null when
   * another worker (or an earlier life of this one) already moved it. `within` runs in the same
   * transaction when it moved (the account's webhook event: exactly once, with the move).
   */
  async transition(taskId: string, owner: string, status: VideoTaskStatus, changes: VideoTaskChanges, within?: (tx: EntityManager, task: VideoTask) => Promise<void>): Promise<VideoTask | null> {
    const final = status === 'completed' || status === 'failed';
    const set = assignments(changes);
    // A task that ends drops its inputs in the same statement (one that failed before submission still has them).
    // Without `within`, one statement needs no transaction of its own.
    const work = async (tx: EntityManager) => {
      const [row] = await tx.execute<TaskRow[]>(
        `with moved as (
           update video_tasks set status = ?, ${set.sql}updated_at = now(),
                  started_at = coalesce(started_at, case when ? in ('in_progress', 'completed') then now() end),
                  completed_at = case when ? then now() else completed_at end,
                  lease_owner = case when ? then null else lease_owner end, lease_until = case when ? then null else lease_until end
            where id = ? and ${ACTIVE} and status <> ? and lease_owner = ?
            returning *),
         dropped as (delete from video_task_inputs where ? and task_id in (select id from moved))
         select * from moved`,
        [status, ...set.values, status, final, final, final, taskId, status, owner, final],
      );
      const moved = row ? toTask(row) : null;
      if (moved) await within?.(tx, moved);
      return moved;
    };
    return within ? this.em().transactional(work) : work(this.em());
  }

  /** Frees the lease `owner` holds and sets when the task is next looked at. */
  async reschedule(taskId: string, owner: string, changes: VideoTaskChanges, delayMs: number): Promise<void> {
    const set = assignments(changes);
    await this.em().execute(
      `update video_tasks set ${set.sql}lease_owner = null, lease_until = null, updated_at = now(),
              next_run_at = now() + (? * interval '1 millisecond')
        where id = ? and lease_owner = ?`,
      [...set.values, delayMs, taskId, owner],
    );
  }
}
