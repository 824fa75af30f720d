import type { CanonicalRequest, CanonicalResponse, CanonicalSource, StreamDecoder } from '../canonical.js';
import { authHeaders } from '../../upstreams/auth.js';
import type { Upstream, UpstreamCredential } from '../../upstreams/model.js';
import { fromAnthropicResponse } from './anthropic/answer.js';
import { checkAnthropicUpstream, toAnthropicRequest } from './anthropic/request.js';
import { AnthropicStreamDecoder } from './anthropic/stream.js';
import { ChatStreamDecoder, checkChatUpstream, fromChatCompletion, toChatRequest } from './openai-compatible/chat.js';

/** One upstream kind, as the inference pipeline uses it. */
export interface ProviderKind {
  /** The client format whose requests pass straight through to this kind. */
  speaks: CanonicalSource;
  /** Appended to the upstream's base URL. */
  path: string;
  headers(upstream: Upstream, credential: UpstreamCredential): Record<string, string>;
  /**
   * 422 (`validation_failed`, reason `unsupported_field`) naming every field of a request of another
   * format that this kind cannot honour. Pure; call it before admission for each kind the request
   * may be routed to (a DomainError thrown later, inside the upstream call, would be read as a
   * connection failure). `body` runs it again as a guard.
   */
  check(request: CanonicalRequest): void;
  /** The upstream body for a request of another format (throws the same 422 as `check`). */
  body(request: CanonicalRequest, upstreamModel: string): Record<string, unknown>;
  /** The upstream body for a request of the format it speaks: the client's own, with the upstream's model name. */
  passthrough(raw: Record<string, unknown>, upstreamModel: string): Record<string, unknown>;
  fromResponse(body: unknown): CanonicalResponse;
  decoder(): StreamDecoder;
}

export const openAiCompatible: ProviderKind = {
  speaks: 'openai-chat',
  path: '/chat/completions',
  headers: authHeaders,
  check: checkChatUpstream,
  body: toChatRequest,
  passthrough: (raw, upstreamModel) => ({
    ...raw,
    model: upstreamModel,
    // Usage is always requested, so a stream can be billed exactly; the client sees it only if it asked.
    ...(raw.stream === true ? { stream_options: { ...((raw.stream_options as object | null | undefined) ?? {}), include_usage: true } } : {}),
  }),
  fromResponse: fromChatCompletion,
  decoder: () => new ChatStreamDecoder(),
};

export const anthropic: ProviderKind = {
  speaks: 'anthropic-messages',
  path: '/messages',
  headers: authHeaders,
  check: checkAnthropicUpstream,
  body: (request, upstreamModel) => toAnthropicRequest(request, upstreamModel),
  passthrough: (raw, upstreamModel) => ({ ...raw, model: upstreamModel }),
  fromResponse: fromAnthropicResponse,
  decoder: () => new AnthropicStreamDecoder(),
};

/** Upstream kinds that serve text formats (video jobs have their own client, src/video/video-upstream.ts). */
export const PROVIDER_KINDS: Partial<Record<Upstream['kind'], ProviderKind>> = {
  'openai-compatible': openAiCompatible,
  anthropic,
};
