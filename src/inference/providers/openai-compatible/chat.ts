import type { ValidationIssue } from '../../../shared/errors.js';
import {
  textOf,
  type CanonicalEvent,
  type CanonicalImage,
  type CanonicalPart,
  type CanonicalRequest,
  type CanonicalResponse,
  type CanonicalToolChoice,
  type CanonicalUsage,
  type OutputPart,
  type ResponseFormat,
  type StopReason,
  type StreamDecoder,
} from '../../canonical.js';
import { chatEffortOf, commonIssues, effortOfThinking, fieldLoc, refuseFields } from '../fields.js';
import type { TokenUsage } from '../../../billing/cost.js';

// ---------------------------------------------------------------------------------------------------
// Through the canonical hub: clients of other formats served by an OpenAI-compatible upstream.

const FINISH_TO_STOP: Record<string, StopReason> = { stop: 'end', length: 'max_tokens', tool_calls: 'tool_use', function_call: 'tool_use', content_filter: 'refusal' };

function imageUrlOf(image: CanonicalImage): string {
  return image.kind === 'url' ? image.url : `data:${image.mediaType};base64,${image.data}`;
}

/** The issues a chat-completions upstream raises: what only the client's format can carry, and `top_k` (chat has none). */
export function chatUpstreamIssues(request: CanonicalRequest): ValidationIssue[] {
  const issues = commonIssues(request);
  if (request.topK !== null && request.topK !== undefined) {
    issues.push({ loc: fieldLoc(request, 'topK'), msg: 'top_k is not available for this model (chat completions have no counterpart); leave it out', type: 'value_error' });
  }
  return issues;
}

/** 422 naming each field a chat-completions upstream cannot honour. */
export function checkChatUpstream(request: CanonicalRequest): void {
  refuseFields(chatUpstreamIssues(request));
}

function chatToolChoice(choice: CanonicalToolChoice): unknown {
  if (typeof choice === 'string') return choice;
  if ('name' in choice) return { type: 'function', function: { name: choice.name } };
  if ('allowed' in choice) return { type: 'allowed_tools', allowed_tools: { mode: choice.mode, tools: choice.allowed.map((name) => ({ type: 'function', function: { name } })) } };
  // Hosted tools are refused by the check before a body is built.
  return 'auto';
}

function chatResponseFormat(format: ResponseFormat): unknown {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    json_schema: { name: format.name, ...(format.description ? { description: format.description } : {}), schema: format.schema, ...(format.strict !== null ? { strict: format.strict } : {}) },
  };
}

/**
 * A canonical request as a chat-completions body for the upstream's model name (usage always
 * requested on streams). Field by field (docs/inference-fields.md): mid-conversation system turns
 * stay where they are; reasoning parts are not sent back (chat has no input field for them); images
 * a tool returned follow its tool turn in a user turn; the output limit is `max_completion_tokens`
 * when reasoning is asked for (reasoning models refuse `max_tokens`), else `max_tokens`; Anthropic
 * thinking budgets become a `reasoning_effort`; metadata and service tier are not sent (they do not
 * change the answer, and the tier is the operator's choice per route).
 */
export function toChatRequest(request: CanonicalRequest, upstreamModel: string): Record<string, unknown> {
  checkChatUpstream(request);
  const messages: Record<string, unknown>[] = [];
  if (request.system) messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) {
    if (message.role === 'system') {
      messages.push({ role: 'system', content: textOf(message.parts) });
      continue;
    }
    if (message.role === 'assistant') {
      const text = message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
      const calls = message.parts.filter((p) => p.type === 'tool_call');
      messages.push({
        role: 'assistant',
        content: text || null,
        ...(calls.length ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } : {}),
      });
      continue;
    }
    // Tool results must directly follow the assistant turn that called them: they go first, as `tool` turns.
    const toolImages: CanonicalPart[] = [];
    for (const part of message.parts) {
      if (part.type !== 'tool_result') continue;
      messages.push({ role: 'tool', tool_call_id: part.toolCallId, content: part.content });
      // A tool turn carries text only: the pictures a tool returned follow in the user turn below.
      for (const image of part.images ?? []) toolImages.push({ type: 'image', image });
    }
    const rest = [...toolImages, ...message.parts.filter((p) => p.type === 'text' || p.type === 'image')];
    if (!rest.length) continue;
    const onlyText = rest.every((p) => p.type === 'text');
    messages.push({
      role: 'user',
      content: onlyText
        ? rest.map((p) => (p.type === 'text' ? p.text : '')).join('')
        : rest.map((p) => (p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image_url', image_url: { url: imageUrlOf((p as Extract<CanonicalPart, { type: 'image' }>).image) } })),
    });
  }
  const choice = request.toolChoice;
  const effort = request.reasoning?.effort ?? effortOfThinking(request.thinking);
  const format = request.responseFormat;
  return {
    model: upstreamModel,
    messages,
    ...(request.tools.length
      ? {
          tools: request.tools.map((t) => ({
            type: 'function',
            function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.parameters, ...(t.strict !== undefined ? { strict: t.strict } : {}) },
          })),
          ...(request.parallelToolCalls !== null && request.parallelToolCalls !== undefined ? { parallel_tool_calls: request.parallelToolCalls } : {}),
        }
      : {}),
    ...(choice ? { tool_choice: chatToolChoice(choice) } : {}),
    ...(request.maxOutputTokens !== null ? { [effort ? 'max_completion_tokens' : 'max_tokens']: request.maxOutputTokens } : {}),
    ...(request.temperature !== null ? { temperature: request.temperature } : {}),
    ...(request.topP !== null ? { top_p: request.topP } : {}),
    ...(request.stop.length ? { stop: request.stop } : {}),
    ...(effort ? { reasoning_effort: chatEffortOf(effort) } : {}),
    ...(format && format.type !== 'text' ? { response_format: chatResponseFormat(format) } : {}),
    ...(request.verbosity ? { verbosity: request.verbosity } : {}),
    ...(request.user ? { user: request.user } : {}),
    ...(request.promptCacheKey ? { prompt_cache_key: request.promptCacheKey } : {}),
    stream: request.stream,
    ...(request.stream ? { stream_options: { include_usage: true } } : {}),
  };
}

export function chatUsageOf(raw: unknown): CanonicalUsage | null {
  const usage = usageOf(raw);
  if (!usage) return null;
  const reasoning = (raw as Record<string, any>).completion_tokens_details?.reasoning_tokens;
  return { ...usage, reasoningTokens: typeof reasoning === 'number' ? reasoning : null };
}

/**
 * The reasoning text of a chat message or delta: `reasoning_content` (DeepSeek, vLLM, SGLang) or
 * `reasoning` (OpenRouter, Ollama, newer vLLM).
 */
function reasoningTextOf(message: any): string {
  if (typeof message?.reasoning_content === 'string') return message.reasoning_content;
  if (typeof message?.reasoning === 'string') return message.reasoning;
  return '';
}

/** An upstream chat completion in canonical form. */
export function fromChatCompletion(body: any): CanonicalResponse {
  const choice = body?.choices?.[0];
  const message = choice?.message ?? {};
  const parts: OutputPart[] = [];
  const reasoning = reasoningTextOf(message);
  if (reasoning) parts.push({ type: 'reasoning', text: reasoning, summary: [], opaque: null });
  if (typeof message.content === 'string' && message.content) parts.push({ type: 'text', text: message.content });
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    parts.push({ type: 'tool_call', id: String(call?.id ?? ''), name: String(call?.function?.name ?? ''), arguments: String(call?.function?.arguments ?? '') });
  }
  return { parts, stopReason: FINISH_TO_STOP[choice?.finish_reason] ?? null, usage: chatUsageOf(body?.usage) };
}

/**
 * An upstream chat-completions stream as canonical events. Chat streams never say a part ended, so
 * open parts end when the finish reason arrives; the usage chunk (after it) becomes one usage event.
 */
export class ChatStreamDecoder implements StreamDecoder {
  private nextIndex = 0;
  private textIndex: number | null = null;
  private reasoningIndex: number | null = null;
  /** The upstream's tool-call index -> our part index. */
  private readonly tools = new Map<number, number>();
  private open: number[] = [];
  done = false;
  error: string | null = null;

  push(event: { event: string | null; data: string }): CanonicalEvent[] {
    if (event.data === '[DONE]') {
      this.done = true;
      return this.closeOpen();
    }
    let chunk: any;
    try {
      chunk = JSON.parse(event.data);
    } catch {
      return [];
    }
    if (chunk?.error) {
      this.error = event.data.slice(0, 500);
      return [];
    }
    const out: CanonicalEvent[] = [];
    const choice = Array.isArray(chunk?.choices) ? chunk.choices[0] : undefined;
    const delta = choice?.delta ?? {};
    const reasoning = reasoningTextOf(delta);
    if (reasoning) {
      // Reasoning that resumes after text or calls is a new part, so parts stay in order of appearance.
      if (this.reasoningIndex === null || this.reasoningIndex !== this.nextIndex - 1) this.open.push((this.reasoningIndex = this.nextIndex++));
      out.push({ type: 'reasoning_delta', index: this.reasoningIndex, text: reasoning });
    }
    if (typeof delta.content === 'string' && delta.content) {
      if (this.textIndex === null) this.open.push((this.textIndex = this.nextIndex++));
      out.push({ type: 'text_delta', index: this.textIndex, text: delta.content });
    }
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const upstreamIndex = typeof call?.index === 'number' ? call.index : 0;
      let index = this.tools.get(upstreamIndex);
      if (index === undefined) {
        index = this.nextIndex++;
        this.tools.set(upstreamIndex, index);
        this.open.push(index);
        out.push({ type: 'tool_call_start', index, id: String(call?.id ?? ''), name: String(call?.function?.name ?? '') });
      }
      if (typeof call?.function?.arguments === 'string' && call.function.arguments) out.push({ type: 'tool_call_delta', index, argumentsDelta: call.function.arguments });
    }
    if (choice?.finish_reason) out.push(...this.closeOpen(), { type: 'stop', reason: FINISH_TO_STOP[choice.finish_reason] ?? 'end' });
    const usage = chatUsageOf(chunk?.usage);
    if (usage) out.push({ type: 'usage', usage });
    return out;
  }

  private closeOpen(): CanonicalEvent[] {
    const ended = this.open.map((index): CanonicalEvent => ({ type: 'part_end', index }));
    this.open = [];
    return ended;
  }
}

/** OpenAI usage -> canonical usage. Cache reads come from `prompt_tokens_details.cached_tokens`; absent means not reported. */
export function usageOf(raw: unknown): TokenUsage | null {
  if (!raw || typeof raw !== 'object') return null;
  const u = raw as Record<string, any>;
  if (typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  const cached = u.prompt_tokens_details?.cached_tokens;
  const written = u.prompt_tokens_details?.cache_write_tokens ?? u.cache_creation_input_tokens;
  return {
    inputTokens: u.prompt_tokens,
    outputTokens: u.completion_tokens,
    cacheReadTokens: typeof cached === 'number' ? cached : null,
    cacheWriteTokens: typeof written === 'number' ? written : null,
  };
}
