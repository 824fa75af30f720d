import type { CanonicalRequest, CanonicalResponse, StreamDecoder } from '../canonical.js';
import type { InferenceCall } from '../inference-call.js';
import { authHeaders } from '../../upstreams/auth.js';
import type { Upstream, UpstreamCredential } from '../../upstreams/model.js';
import { fromAnthropicResponse } from './anthropic/answer.js';
import { checkAnthropicUpstream, toAnthropicRequest } from './anthropic/request.js';
import { AnthropicStreamDecoder } from './anthropic/stream.js';
import { ChatStreamDecoder, checkChatUpstream, fromChatCompletion, toChatRequest } from './openai-compatible/chat.js';

/** One upstream kind, as the inference pipeline uses it. */
export interface ProviderKind {
  /**
   * The client formats (by their id) whose requests this kind's upstreams take as the client sent
   * them; every other format is translated through the hub (`path`, `body` and the rest below).
   */
  native: Partial<Record<string, NativeFormat>>;
  /** Appended to the upstream's base URL, for a request translated through the hub. */
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
  fromResponse(body: unknown): CanonicalResponse;
  decoder(): StreamDecoder;
}

/** A client format an upstream kind serves itself: the client's own body goes, with the upstream's model name. */
export interface NativeFormat {
  /** Appended to the upstream's base URL. */
  path: string;
  /** Whether this upstream serves the format (when only some upstreams of the kind declare it); absent: all do. */
  servedBy?(upstream: Upstream): boolean;
  /** The upstream body: the client's own, with the upstream's model name. */
  body(raw: Record<string, unknown>, upstreamModel: string): Record<string, unknown>;
  /** Request headers of the client's that reach the upstream as they are; null when none. */
  headers?(call: InferenceCall): Record<string, string> | null;
}

export const openAiCompatible: ProviderKind = {
  native: {
    'openai-chat': {
      path: '/chat/completions',
      body: (raw, upstreamModel) => ({
        ...raw,
        model: upstreamModel,
        // Usage is always requested, so a stream can be billed exactly; the client sees it only if it asked.
        ...(raw.stream === true ? { stream_options: { ...((raw.stream_options as object | null | undefined) ?? {}), include_usage: true } } : {}),
      }),
    },
    // An upstream that declares native Responses support is sent Responses requests as they are.
    'openai-responses': {
      path: '/responses',
      servedBy: (upstream) => upstream.nativeResponses === true,
      body: (raw, upstreamModel) => {
        // The conversation is already whole (expanded from our store): the upstream keeps no state for us.
        const { previous_response_id: _expanded, ...body } = raw;
        return { ...body, model: upstreamModel };
      },
    },
  },
  path: '/chat/completions',
  headers: authHeaders,
  check: checkChatUpstream,
  body: toChatRequest,
  fromResponse: fromChatCompletion,
  decoder: () => new ChatStreamDecoder(),
};

export const anthropic: ProviderKind = {
  native: {
    'anthropic-messages': {
      path: '/messages',
      body: (raw, upstreamModel) => ({ ...raw, model: upstreamModel }),
      // Beta features of the Messages API reach an Anthropic upstream as the client asked for them.
      headers: (call) => (call.anthropicBeta ? { 'anthropic-beta': call.anthropicBeta } : null),
    },
  },
  path: '/messages',
  headers: authHeaders,
  check: checkAnthropicUpstream,
  body: (request, upstreamModel) => toAnthropicRequest(request, upstreamModel),
  fromResponse: fromAnthropicResponse,
  decoder: () => new AnthropicStreamDecoder(),
};

/** Upstream kinds that serve text formats (video jobs have their own client, src/video/video-upstream.ts). */
export const PROVIDER_KINDS: Partial<Record<Upstream['kind'], ProviderKind>> = {
  'openai-compatible': openAiCompatible,
  anthropic,
};
