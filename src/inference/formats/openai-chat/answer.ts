import type { TokenUsage } from '../../../billing/cost.js';
import type { CanonicalResponse, CanonicalUsage, StopReason } from '../../canonical.js';

/**
 * Chat-completions answers as clients see them: the public shape of responses and stream chunks
 * (only known fields, our own id and the public model id, so nothing the upstream adds ever reaches
 * the client), and a canonical response rendered as a chat completion.
 */

/** The usage object clients see: OpenAI's documented fields only. */
export function publicUsage(usage: TokenUsage): object {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    ...(usage.cacheReadTokens === null ? {} : { prompt_tokens_details: { cached_tokens: usage.cacheReadTokens } }),
  };
}

const MESSAGE_FIELDS = ['role', 'content', 'refusal', 'tool_calls', 'function_call', 'annotations', 'audio', 'reasoning_content'];

function pick(source: unknown, fields: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (source && typeof source === 'object') for (const f of fields) if (f in source) out[f] = (source as Record<string, unknown>)[f];
  return out;
}

function publicChoices(choices: unknown, part: 'message' | 'delta'): object[] {
  if (!Array.isArray(choices)) return [];
  return choices.map((c, i) => ({
    index: typeof c?.index === 'number' ? c.index : i,
    [part]: pick(c?.[part], MESSAGE_FIELDS),
    logprobs: c?.logprobs ?? null,
    finish_reason: c?.finish_reason ?? null,
  }));
}

export interface PublicIdentity {
  /** Our response id (`chatcmpl-…`), the same on every chunk. */
  id: string;
  /** The public model id the client asked for. */
  model: string;
  created: number;
}

/**
 * The identity a chat answer shows: `chatcmpl-` and the event's hex id. Every chat answer applies it once, where it
 * is written (the same-format rewrite and the hub's renderer and encoder alike), as Messages writes `msg_` and
 * Responses `resp_`: the pipeline hands every format the same bare identity.
 */
export const chatIdentity = (who: PublicIdentity): PublicIdentity => ({ ...who, id: `chatcmpl-${who.id}` });

/** A response body (`chat.completion`) or stream chunk (`chat.completion.chunk`) as clients see it. */
function publicBody(object: 'chat.completion' | 'chat.completion.chunk', upstream: any, who: PublicIdentity, usage: TokenUsage | null): object {
  return {
    id: who.id,
    object,
    created: who.created,
    model: who.model,
    choices: publicChoices(upstream?.choices, object === 'chat.completion' ? 'message' : 'delta'),
    ...(usage ? { usage: publicUsage(usage) } : {}),
  };
}

export function publicCompletion(upstream: any, who: PublicIdentity, usage: TokenUsage | null): object {
  return publicBody('chat.completion', upstream, who, usage);
}

export function publicChunk(upstream: any, who: PublicIdentity, usage: TokenUsage | null): object {
  return publicBody('chat.completion.chunk', upstream, who, usage);
}

/** The text a chunk delivers (content and tool-call arguments), for counting what a cut stream produced. */
export function deliveredTextOf(chunk: any): string {
  if (!Array.isArray(chunk?.choices)) return '';
  let text = '';
  for (const choice of chunk.choices) {
    const delta = choice?.delta;
    if (typeof delta?.content === 'string') text += delta.content;
    if (typeof delta?.reasoning_content === 'string') text += delta.reasoning_content;
    if (Array.isArray(delta?.tool_calls)) for (const call of delta.tool_calls) if (typeof call?.function?.arguments === 'string') text += call.function.arguments;
  }
  return text;
}

export const STOP_TO_FINISH: Record<StopReason, string> = { end: 'stop', max_tokens: 'length', tool_use: 'tool_calls', stop_sequence: 'stop', refusal: 'content_filter' };

/** The usage a hub answer shows: the public usage, and reasoning tokens when counted. */
export function publicUsageOf(usage: CanonicalUsage): object {
  return {
    ...publicUsage(usage),
    ...(usage.reasoningTokens === null ? {} : { completion_tokens_details: { reasoning_tokens: usage.reasoningTokens } }),
  };
}

/** A canonical response as a chat completion. */
export function renderChatCompletion(response: CanonicalResponse, who: PublicIdentity): object {
  const text = response.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
  const calls = response.parts.filter((p) => p.type === 'tool_call');
  // Reasoning is shown the way chat servers that reason show it (DeepSeek, vLLM): `reasoning_content`.
  const reasoning = response.parts.filter((p) => p.type === 'reasoning').map((p) => p.text || p.summary.join('\n\n')).join('\n\n');
  return {
    id: who.id,
    object: 'chat.completion',
    created: who.created,
    model: who.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || (calls.length ? null : ''),
          refusal: null,
          ...(reasoning ? { reasoning_content: reasoning } : {}),
          ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
        },
        logprobs: null,
        finish_reason: response.stopReason ? STOP_TO_FINISH[response.stopReason] : 'stop',
      },
    ],
    ...(response.usage ? { usage: publicUsageOf(response.usage) } : {}),
  };
}

