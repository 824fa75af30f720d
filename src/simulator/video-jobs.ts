import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { cutConnection, parseDirectives, readJson, sendError, sendStatusError, simulateFailure, type RouteContext } from './common.js';

/**
 * The asynchronous video-generation job API (the gateway's upstream kind `video-jobs`) on the simulator's
 * server. Our own contract, modelled on OpenAI's Videos API; every route needs `Authorization: Bearer <key>`,
 * and errors take OpenAI's shape `{error:{message,type,param,code}}` with `errorDetail` in the message.
 *
 *   POST /v1/videos               JSON {model, prompt, seconds, resolution, width, height, ratio, audio, multi_shot,
 *                                 prompt_extend, references: [{type, role, url, duration}]}; `model` (a non-empty
 *                                 string) and `seconds` (a positive number, or a numeric string) are required, and
 *                                 `references`, when present, is a list of objects with a string `url` (else 400)
 *                                 → 200 {id: "video_<hex>", object: "video", status: "queued", progress: 0, model,
 *                                        seconds (a number), created_at (unix seconds)}
 *   GET  /v1/videos/{id}          → 200 the job: {id, object: "video", status: "queued" | "in_progress" | "completed"
 *                                 | "failed", progress (0-100), model, seconds, created_at, completed_at (unix
 *                                 seconds, once completed or failed), error: {code, message} (once failed)};
 *                                 an unknown id → 404
 *   GET  /v1/videos/{id}/content  → 200 video/mp4 with content-length, once completed; 404 before (and for a failed job)
 *
 * A job's life is driven by the clock, computed when asked (no timers): queued for `start-ms`, then in_progress
 * for `video-ms` (progress rising to 99), then completed (progress 100) or failed. Jobs live in memory only.
 * The content is a real H.264 MP4 from src/simulator/media/: 2 s for `seconds` ≤ 3, else 5 s.
 *
 * Directives in the prompt (`[sim:...]`, as on the other routes) choose the behaviour:
 *   start-ms=MS        time queued (default 100)
 *   video-ms=MS        time in progress (default 400)
 *   fail               end as failed, error {code: "generation_failed", message with errorDetail}
 *   stuck              stay in_progress forever
 *   content-status=CODE  the content download answers that HTTP error (once the job is completed)
 *   cut-content        the content download sends its headers and half the bytes, then drops the connection
 *   status=CODE        the submit answers that HTTP error (429 adds Retry-After); no job is created
 *   latency=MS         the submit waits before answering
 *   hang               the submit never answers
 *   down=NAME          the simulator started with that `name` answers the submit with 503
 */

export interface VideoJob {
  id: string;
  model: string;
  seconds: number;
  /** The submitted body, as received. */
  request: any;
  /** When the job was accepted, in ms since the epoch. */
  createdAt: number;
  startMs: number;
  videoMs: number;
  fail: boolean;
  stuck: boolean;
  contentStatus?: number;
  cutContent: boolean;
  /** The fixture this job's content is served from. */
  fixture: VideoFixture;
  /** Status requests for this job. */
  polls: number;
  /** Content requests for this job, whatever their answer. */
  downloads: number;
}

/** The simulator's video jobs, by id, and how often each route was called in all (after auth). */
export interface VideoJobs {
  jobs: Map<string, VideoJob>;
  /** POST /v1/videos requests, accepted or not (accepted ones are `jobs.size`). */
  submits: number;
  /** Status requests, unknown ids included. */
  polls: number;
  /** Content requests, unknown ids and not-ready jobs included. */
  downloads: number;
}

export interface VideoFixture {
  file: string;
  seconds: number;
  width: number;
  height: number;
}

/** The MP4 files served as content: H.264 (High), yuv420p, 12 fps, faststart, generated with ffmpeg. */
export const VIDEO_FIXTURES: VideoFixture[] = [
  { file: 'blue-2s.mp4', seconds: 2, width: 64, height: 36 },
  { file: 'testsrc-5s.mp4', seconds: 5, width: 96, height: 54 },
];

export function videoFixtureFor(seconds: number): VideoFixture {
  return seconds <= 3 ? VIDEO_FIXTURES[0]! : VIDEO_FIXTURES[1]!;
}

// From src/simulator/ when run from source, from dist/src/simulator/ when built (tsc copies no .mp4).
const FIXTURE_DIRS = ['./media/', '../../../src/simulator/media/'].map((dir) => new URL(dir, import.meta.url));
const fixtureBytes = new Map<string, Buffer>();

/** A fixture's bytes, read once. */
export function videoFixtureBytes(fixture: VideoFixture): Buffer {
  let bytes = fixtureBytes.get(fixture.file);
  if (!bytes) {
    const dir = FIXTURE_DIRS.find((candidate) => existsSync(new URL(fixture.file, candidate)));
    if (!dir) throw new Error(`video fixture ${fixture.file} not found`);
    bytes = readFileSync(new URL(fixture.file, dir));
    fixtureBytes.set(fixture.file, bytes);
  }
  return bytes;
}

export function createVideoJobs(): VideoJobs {
  return { jobs: new Map(), submits: 0, polls: 0, downloads: 0 };
}

/** The directives only this API reads; the shared ones (status, latency, hang, down) come from parseDirectives. */
function jobDirectives(prompt: string) {
  const found = /\[sim:([^\]]*)\]/.exec(prompt)?.[1] ?? '';
  const options = new Map(found.split(/\s+/).filter(Boolean).map((part) => [part.split('=')[0]!, part.split('=')[1] ?? 'true']));
  const int = (key: string, fallback: number) => (options.has(key) ? Number(options.get(key)) : fallback);
  return {
    startMs: int('start-ms', 100),
    videoMs: int('video-ms', 400),
    fail: options.has('fail'),
    stuck: options.has('stuck'),
    contentStatus: options.has('content-status') ? Number(options.get('content-status')) : undefined,
    cutContent: options.has('cut-content'),
  };
}

/** The job as the API shows it at `now`. */
export function videoJobView(job: VideoJob, detail: string, now = Date.now()) {
  const elapsed = now - job.createdAt;
  const finishedAt = job.createdAt + job.startMs + job.videoMs;
  const status = elapsed < job.startMs ? 'queued' : job.stuck || now < finishedAt ? 'in_progress' : job.fail ? 'failed' : 'completed';
  const progress =
    status === 'queued' ? 0 : status === 'completed' ? 100 : Math.min(99, Math.floor((100 * (elapsed - job.startMs)) / Math.max(job.videoMs, 1)));
  return {
    id: job.id,
    object: 'video',
    status,
    progress,
    model: job.model,
    seconds: job.seconds,
    created_at: Math.floor(job.createdAt / 1000),
    ...(status === 'completed' || status === 'failed' ? { completed_at: Math.floor(finishedAt / 1000) } : {}),
    ...(status === 'failed' ? { error: { code: 'generation_failed', message: `Video generation failed: simulated failure ${detail}` } } : {}),
  };
}

/** Why this submit body is invalid, as [param, message]; undefined when it is acceptable. */
function invalidSubmit(body: any): [string, string] | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return ['body', 'The request body must be a JSON object.'];
  if (typeof body.model !== 'string' || !body.model) return ['model', "Missing required parameter: 'model'."];
  if (body.seconds === undefined || body.seconds === null || body.seconds === '') return ['seconds', "Missing required parameter: 'seconds'."];
  const seconds = Number(body.seconds);
  if (!Number.isFinite(seconds) || seconds <= 0) return ['seconds', `Invalid 'seconds': expected a positive number, got ${JSON.stringify(body.seconds)}.`];
  if (body.references !== undefined && (!Array.isArray(body.references) || body.references.some((r: any) => typeof r?.url !== 'string'))) {
    return ['references', "Invalid 'references': expected a list of objects with a string 'url'."];
  }
  return undefined;
}

/** Every `/v1/videos` route, called after the Bearer key is checked. */
export async function handleVideos(req: IncomingMessage, res: ServerResponse, path: string, ctx: RouteContext, store: VideoJobs): Promise<void> {
  const [, id, content, ...rest] = path.slice('/v1/videos'.length).split('/');
  const notFound = (message: string, code: string) => sendError(res, 404, `${message} ${ctx.detail}`, 'invalid_request_error', code);

  if (req.method === 'POST' && id === undefined) {
    store.submits++;
    let body: any;
    try {
      body = await readJson(req);
    } catch {
      return sendError(res, 400, `Invalid JSON body ${ctx.detail}`, 'invalid_request_error', null);
    }
    ctx.record(req, res, path, body);
    const invalid = invalidSubmit(body);
    if (invalid) return sendError(res, 400, `${invalid[1]} ${ctx.detail}`, 'invalid_request_error', 'invalid_value', invalid[0]);
    const prompt = typeof body.prompt === 'string' ? body.prompt : '';
    if (await simulateFailure(parseDirectives([{ content: prompt }]), ctx, 503, (status, message) => sendStatusError(res, status, message))) return;

    const seconds = Number(body.seconds);
    const job: VideoJob = {
      id: `video_${randomBytes(12).toString('hex')}`,
      model: body.model,
      seconds,
      request: body,
      createdAt: Date.now(),
      ...jobDirectives(prompt),
      fixture: videoFixtureFor(seconds),
      polls: 0,
      downloads: 0,
    };
    if (ctx.options.retainRecords === false) {
      // A long-running simulator forgets jobs an hour old (and the references each carries).
      for (const [jobId, old] of store.jobs) if (old.createdAt < job.createdAt - 3_600_000) store.jobs.delete(jobId);
    }
    store.jobs.set(job.id, job);
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify(videoJobView(job, ctx.detail)));
  }

  if (req.method !== 'GET' || !id || rest.length || (content !== undefined && content !== 'content')) {
    return notFound(`Unknown route ${req.method} ${path}`, 'unknown_url');
  }
  ctx.record(req, res, path, undefined);
  const job = store.jobs.get(id);

  if (content === undefined) {
    store.polls++;
    if (!job) return notFound(`No video found with id '${id}'.`, 'video_not_found');
    job.polls++;
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(JSON.stringify(videoJobView(job, ctx.detail)));
  }

  store.downloads++;
  if (!job) return notFound(`No video found with id '${id}'.`, 'video_not_found');
  job.downloads++;
  const { status } = videoJobView(job, ctx.detail);
  if (status !== 'completed') return notFound(`Video '${id}' is ${status}; its content is not available.`, 'video_not_ready');
  if (job.contentStatus) return sendStatusError(res, job.contentStatus, `Simulated ${job.contentStatus} downloading video content ${ctx.detail}`);

  const bytes = videoFixtureBytes(job.fixture);
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': bytes.length });
  if (!job.cutContent) return void res.end(bytes);
  // Half the promised bytes reach the client, then the connection drops.
  await new Promise<void>((resolve) => res.write(bytes.subarray(0, bytes.length >> 1), () => resolve()));
  return cutConnection(res);
}
