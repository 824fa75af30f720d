import type { ChatRequest } from '../../translate/openai-chat.js';
import type { RouteCandidate } from '../../routes.js';
import { UpstreamFailure, type UpstreamClient, type UpstreamResponse } from '../../upstream-client.js';

/** The most of an upstream error body we read (for the operator log). */
const ERROR_EXCERPT_BYTES = 2_048;

/**
 * Calls an OpenAI-compatible `/chat/completions`. The client's request passes through (same wire
 * format) with the upstream's model name, and usage is always requested on streams. Resolves with
 * a 200 response whose body the caller reads; any other answer becomes an `UpstreamFailure`.
 */
export async function callChatCompletions(
  client: UpstreamClient,
  route: RouteCandidate,
  request: ChatRequest,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  const body = {
    ...request,
    model: route.upstreamModel,
    ...(request.stream ? { stream_options: { ...(request.stream_options ?? {}), include_usage: true } } : {}),
  };
  const response = await client.post(route.upstream, '/chat/completions', JSON.stringify(body), { authorization: `Bearer ${route.upstream.credential}` }, signal);
  if (response.status === 200) return response;
  throw await failureFromResponse(route.upstream.id, response);
}

/** Maps a non-200 upstream answer to our failure kinds, keeping its text for the operator only. */
export async function failureFromResponse(upstreamId: string, response: UpstreamResponse): Promise<UpstreamFailure> {
  let excerpt = '';
  try {
    for await (const chunk of response.body) {
      excerpt += Buffer.from(chunk as Uint8Array).toString('utf8');
      if (excerpt.length >= ERROR_EXCERPT_BYTES) break;
    }
  } catch {
    // The body is only for the log.
  } finally {
    response.body.destroy();
  }
  const detail = `HTTP ${response.status}: ${excerpt.slice(0, ERROR_EXCERPT_BYTES)}`;
  const status = response.status;
  if (status === 429) {
    const retryAfter = Number(response.headers['retry-after']);
    return new UpstreamFailure('rate_limited', upstreamId, detail, status, Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(Math.ceil(retryAfter), 60) : null);
  }
  if (status === 408 || status === 504) return new UpstreamFailure('timeout', upstreamId, detail, status);
  if (status >= 500) return new UpstreamFailure('server_error', upstreamId, detail, status);
  if (status === 401 || status === 403 || status === 404) return new UpstreamFailure('misconfigured', upstreamId, detail, status);
  return new UpstreamFailure('rejected', upstreamId, detail, status);
}
