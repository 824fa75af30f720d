import { z } from 'zod';
import type { CatalogService } from '../catalog/catalog.service.js';
import type { KeyPrincipal } from '../keys/keys.service.js';
import { DomainError } from '../shared/errors.js';
import type { Logger } from '../shared/logging.js';
import { parseInput } from '../shared/validation.js';
import { anthropic } from './providers/index.js';
import type { RequestLimiter } from './limits.js';
import type { RouteCandidate, RouteTable } from '../upstreams/routes.js';
import { resolveModel } from './scope.js';
import type { UpstreamClient } from '../upstreams/client.js';
import { clientErrorOf, UpstreamFailure } from '../upstreams/failures.js';

/**
 * The body of Anthropic's `POST /v1/messages/count_tokens`, checked leniently: `model` and `messages`
 * are required (each message a role and its content); `system`, `tools`, `thinking`, `tool_choice`
 * and anything else a Messages request may hold are accepted as they are, since they only count
 * towards the input. `max_tokens` is not required (nothing is generated).
 */
export const countTokensBody = z.looseObject({
  model: z.string().min(1),
  messages: z.array(z.looseObject({ role: z.string().min(1), content: z.union([z.string(), z.array(z.unknown())]) })),
  system: z.union([z.string(), z.array(z.unknown())]).optional(),
  tools: z.array(z.unknown()).optional(),
});

/** A token count answer is a few bytes; anything much larger is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * The estimate used when no route of the model speaks Anthropic's API: the UTF-8 byte length of
 * `JSON.stringify({system, messages, tools})` divided by 4, rounded up (at least 1). It is a rough,
 * usually high count (JSON punctuation and base64 images count as text), good for budgeting a context
 * window, not for billing; nothing here is billed.
 */
export function estimateInputTokens(body: { system?: unknown; messages: unknown; tools?: unknown }): number {
  const bytes = Buffer.byteLength(JSON.stringify({ system: body.system, messages: body.messages, tools: body.tools }), 'utf8');
  return Math.max(1, Math.ceil(bytes / 4));
}

export interface CountTokensOptions {
  /** The client's `anthropic-beta` header, forwarded to an Anthropic upstream as it is. */
  anthropicBeta?: string;
  signal?: AbortSignal;
}

/**
 * Anthropic's token counting: scope-checked like a Messages request; forwarded (within the key's rate
 * and concurrency limits) to the model's first `anthropic` route (with the upstream's own model name and credential) when it has one, otherwise the
 * documented estimate. Not billed and holds nothing. Upstream failures become our own errors; the
 * upstream's words go to the operator log only.
 */
export class CountTokensService {
  constructor(private readonly deps: { catalog: CatalogService; routes: RouteTable; upstreams: UpstreamClient; limiter: RequestLimiter; log: Logger }) {}

  async count(principal: KeyPrincipal, rawBody: unknown, options: CountTokensOptions = {}): Promise<{ input_tokens: number }> {
    const body = parseInput(countTokensBody, rawBody);
    const model = resolveModel(this.deps.catalog.snapshot, principal, '/v1/messages', body.model);
    const routes = this.deps.routes.candidates(model.id, principal.routeGroup).filter((route) => route.upstream.kind === 'anthropic');
    if (routes.length === 0) return { input_tokens: estimateInputTokens(body) };
    // A forwarded count costs the upstream a call: it takes a slot of the key's rate and concurrency limits like any request.
    const slot = await this.deps.limiter.acquire(principal);
    try {
      return await this.forward(routes, body, options);
    } finally {
      slot.release();
    }
  }

  private async forward(routes: RouteCandidate[], body: Record<string, unknown>, options: CountTokensOptions): Promise<{ input_tokens: number }> {
    let failure: UpstreamFailure | null = null;
    for (const route of routes) {
      const headers = { ...anthropic.headers(route.upstream, route.credential), ...(options.anthropicBeta ? { 'anthropic-beta': options.anthropicBeta } : {}) };
      try {
        // The upstream pool's first-byte and idle timeouts bound the call; the signal is the client's disconnect.
        const signal = options.signal ?? new AbortController().signal;
        const response = await this.deps.upstreams.post(route.upstream, '/messages/count_tokens', JSON.stringify({ ...body, model: route.upstreamModel }), headers, signal);
        if (response.status !== 200) throw await this.deps.upstreams.failureFrom(route.upstream.id, response);
        return { input_tokens: await readCount(route.upstream.id, response.body) };
      } catch (error) {
        if (options.signal?.aborted) throw new DomainError('bad_request', 'The request was cancelled', { reason: 'cancelled' });
        failure = this.deps.upstreams.failureOf(error, route.upstream.id);
        this.deps.log.warn({ upstream: route.upstream.id, kind: failure.kind, status: failure.status, detail: failure.detail }, 'upstream token count failed');
        if (!failure.retryable) break;
      }
    }
    throw clientErrorOf(failure!);
  }
}

/** `{input_tokens: <non-negative integer>}` from the upstream's answer, or a server_error failure. */
async function readCount(upstreamId: string, body: AsyncIterable<unknown> & { destroy(): void }): Promise<number> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += Buffer.from(chunk as Uint8Array).toString('utf8');
      if (text.length > MAX_ANSWER_BYTES) throw new UpstreamFailure('server_error', upstreamId, `token count answer over ${MAX_ANSWER_BYTES} bytes`);
    }
  } finally {
    body.destroy();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamFailure('server_error', upstreamId, 'token count answer is not JSON');
  }
  const count = (parsed as { input_tokens?: unknown } | null)?.input_tokens;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) throw new UpstreamFailure('server_error', upstreamId, 'token count answer without input_tokens');
  return count;
}

