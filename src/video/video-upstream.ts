import type { Readable } from 'node:stream';
import { authHeaders } from '../upstreams/auth.js';
import type { UpstreamClient } from '../upstreams/client.js';
import { UpstreamFailure } from '../upstreams/failures.js';
import type { Upstream } from '../upstreams/model.js';
import type { VideoJobSpec } from './video-request.js';

/**
 * The `video-jobs` upstream kind: an asynchronous video API modelled on OpenAI's Videos API.
 *   POST {base}/videos              {model, prompt, seconds, resolution, width, height, ratio, audio,
 *                                    multi_shot, prompt_extend, references} -> {id, status}
 *   GET  {base}/videos/{id}         -> {id, status: queued | in_progress | completed | failed, progress, error?}
 *   GET  {base}/videos/{id}/content -> video/mp4
 * Every answer other than 200 becomes an `UpstreamFailure` (its text stays in the operator log).
 */
export type UpstreamVideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

export interface UpstreamVideoState {
  status: UpstreamVideoStatus;
  progress: number;
  /** Operator-facing only. */
  error: string | null;
}

/** The answer's body as JSON: either client call's answer (its body read whole as text). */
async function json(response: { body: { text(): Promise<string> } }, upstreamId: string): Promise<any> {
  try {
    return JSON.parse(await response.body.text());
  } catch {
    throw new UpstreamFailure('server_error', upstreamId, 'video API answer is not JSON');
  }
}

export async function submitVideo(client: UpstreamClient, upstream: Upstream, upstreamModel: string, spec: VideoJobSpec): Promise<string> {
  const body = {
    model: upstreamModel,
    prompt: spec.prompt,
    seconds: spec.seconds,
    resolution: spec.resolution,
    width: spec.width,
    height: spec.height,
    ratio: spec.ratio,
    audio: spec.audio,
    multi_shot: spec.multiShot,
    prompt_extend: spec.promptExtend,
    references: spec.references.map((r) => ({ type: r.type, role: r.role, url: r.url, ...(r.durationSeconds === null ? {} : { duration: r.durationSeconds }) })),
  };
  const response = await client.post(upstream, '/videos', JSON.stringify(body), authHeaders(upstream), AbortSignal.timeout(upstream.timeouts.firstByteMs));
  if (response.status !== 200) throw await client.failureFrom(upstream.id, response);
  const answer = await json(response, upstream.id);
  if (typeof answer?.id !== 'string' || !answer.id) throw new UpstreamFailure('server_error', upstream.id, 'video submission without an id');
  return answer.id;
}

export async function pollVideo(client: UpstreamClient, upstream: Upstream, upstreamTaskId: string): Promise<UpstreamVideoState> {
  const response = await client.get(upstream, `/videos/${encodeURIComponent(upstreamTaskId)}`, authHeaders(upstream), AbortSignal.timeout(upstream.timeouts.firstByteMs));
  if (response.status !== 200) throw await client.failureFrom(upstream.id, response);
  const answer = await json(response, upstream.id);
  const status: UpstreamVideoStatus = ['queued', 'in_progress', 'completed', 'failed'].includes(answer?.status) ? answer.status : 'in_progress';
  const progress = typeof answer?.progress === 'number' ? Math.max(0, Math.min(100, Math.round(answer.progress))) : 0;
  return { status, progress, error: answer?.error ? JSON.stringify(answer.error).slice(0, 500) : null };
}

/** Opens the finished MP4; the caller streams it into storage. */
export async function downloadVideo(client: UpstreamClient, upstream: Upstream, upstreamTaskId: string): Promise<{ body: Readable; bytes: number | null }> {
  const response = await client.get(upstream, `/videos/${encodeURIComponent(upstreamTaskId)}/content`, authHeaders(upstream));
  if (response.status !== 200) throw await client.failureFrom(upstream.id, response);
  const length = Number(response.headers['content-length']);
  return { body: response.body, bytes: Number.isFinite(length) && length > 0 ? length : null };
}
