import type {
  CanonicalEvent,
  CanonicalImage,
  CanonicalMessage,
  CanonicalPart,
  CanonicalRequest,
  CanonicalResponse,
  CanonicalUsage,
  OutputPart,
  StopReason,
  StreamDecoder,
} from '../../canonical.js';
import type { ValidationIssue } from '../../../shared/errors.js';
import { textOf, toolInputOf } from '../../canonical.js';
import { anthropicEffortOf, commonIssues, fieldLoc, refuseFields } from '../fields.js';

/**
 * The `anthropic` upstream kind, pure parts: a canonical request as a Messages API body, and the
 * upstream's answers (JSON message, SSE stream) in canonical form. No HTTP here.
 */

/** Anthropic requires `max_tokens`; used when the client set no limit. */
export const DEFAULT_MAX_TOKENS = 4096;

type Block = Record<string, unknown>;

/** `data:<media type>[;params][;base64],<payload>` */
const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s;

/**
 * Anthropic takes images as base64 or an http(s) URL, not as data: URLs, so those are unpacked
 * (a data: URL without `;base64` carries percent-encoded bytes). Any other URL goes as a URL source,
 * for the upstream to accept or refuse.
 */
function imageSource(image: CanonicalImage): Block {
  if (image.kind === 'base64') return { type: 'base64', media_type: image.mediaType, data: image.data };
  const match = DATA_URL.exec(image.url);
  if (!match) return { type: 'url', url: image.url };
  const [, mediaType, params, payload] = match;
  const data = params.split(';').includes('base64') ? payload : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64');
  return { type: 'base64', media_type: mediaType, data };
}

function blockOf(part: CanonicalPart): Block | null {
  switch (part.type) {
    case 'text':
      // The API refuses empty text blocks.
      return part.text ? { type: 'text', text: part.text } : null;
    case 'image':
      return { type: 'image', source: imageSource(part.image) };
    case 'tool_call':
      return { type: 'tool_use', id: part.id, name: part.name, input: toolInputOf(part.arguments) };
    case 'tool_result': {
      const images = part.images ?? [];
      const content = images.length ? [...(part.content ? [{ type: 'text', text: part.content }] : []), ...images.map((image) => ({ type: 'image', source: imageSource(image) }))] : part.content;
      return { type: 'tool_result', tool_use_id: part.toolCallId, content, ...(part.isError ? { is_error: true } : {}) };
    }
    case 'reasoning': {
      // Only Anthropic's own thinking (signed, or redacted) can go back; another family's reasoning cannot be verified.
      const opaque = part.opaque;
      if (opaque?.family !== 'anthropic') return null;
      return 'signature' in opaque ? { type: 'thinking', thinking: part.text, signature: opaque.signature } : { type: 'redacted_thinking', data: opaque.redactedData };
    }
  }
}

/**
 * The conversation as Anthropic wants it: strictly alternating turns (consecutive same-role
 * messages merged), no empty turns, and in each user turn the tool results first (the API requires
 * them right at the start of the turn that follows the calls). Mid-conversation system turns are
 * taken out here and joined into the system prompt by the caller.
 */
function anthropicMessages(messages: CanonicalMessage[]): { role: 'user' | 'assistant'; content: Block[] }[] {
  const out: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  for (const message of messages) {
    if (message.role === 'system') continue;
    const blocks = message.parts.map(blockOf).filter((b): b is Block => b !== null);
    if (!blocks.length) continue;
    const last = out.at(-1);
    if (last && last.role === message.role) last.content.push(...blocks);
    else out.push({ role: message.role, content: blocks });
  }
  for (const turn of out) {
    if (turn.role === 'user') turn.content = [...turn.content.filter((b) => b.type === 'tool_result'), ...turn.content.filter((b) => b.type !== 'tool_result')];
  }
  return out;
}

/** The issues an Anthropic upstream raises: what only the client's format can carry, and `json_object` output (Anthropic has no such mode). */
export function anthropicUpstreamIssues(request: CanonicalRequest): ValidationIssue[] {
  const issues = commonIssues(request);
  // OpenAI's formats take 0-2, Anthropic's 0-1: scaling would change every answer, so the upper half is refused.
  if (request.temperature !== null && request.temperature > 1) {
    issues.push({ loc: fieldLoc(request, 'temperature'), msg: 'temperature is at most 1 for this model', type: 'less_than_equal' });
  }
  if (request.responseFormat?.type === 'json_object') {
    issues.push({
      loc: fieldLoc(request, 'responseFormat'),
      msg: 'JSON object mode is not available for this model; send a json_schema format instead',
      type: 'value_error',
    });
  }
  return issues;
}

/** 422 naming each field an Anthropic upstream cannot honour. */
export function checkAnthropicUpstream(request: CanonicalRequest): void {
  refuseFields(anthropicUpstreamIssues(request));
}

/**
 * Thinking as Anthropic takes it: the client's own `thinking` (Messages), else adaptive thinking for
 * a reasoning effort other than `none` (the effort itself goes in `output_config.effort`).
 *
 * Anthropic requires an assistant turn that ends in tool calls to start with its thinking when
 * thinking is on; a conversation whose last such turn carries no signed thinking (it came from a
 * client that cannot send it back) is sent without thinking instead of being refused by the upstream.
 */
function thinkingOf(request: CanonicalRequest, messages: { role: string; content: Block[] }[]): Block | null {
  const thinking = request.thinking;
  const effort = request.reasoning?.effort;
  let block: Block | null = null;
  if (thinking) block = thinking.type === 'enabled' ? { type: 'enabled', budget_tokens: thinking.budgetTokens } : { type: thinking.type };
  else if (effort && effort !== 'none') block = { type: 'adaptive' };
  if (!block || block.type === 'disabled') return block;
  const lastAssistant = messages.findLast((m) => m.role === 'assistant');
  const unsigned = lastAssistant && lastAssistant.content.some((b) => b.type === 'tool_use') && !lastAssistant.content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
  return unsigned ? null : block;
}

function anthropicToolChoice(request: CanonicalRequest): Block | null {
  const choice = request.toolChoice;
  let block: Block | null = null;
  if (typeof choice === 'string') block = { type: choice === 'required' ? 'any' : choice };
  else if (choice && 'name' in choice) block = { type: 'tool', name: choice.name };
  else if (choice && 'allowed' in choice) block = { type: choice.mode === 'required' ? 'any' : 'auto' };
  if (request.parallelToolCalls === false) block = { ...(block ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return block;
}

/**
 * A canonical request as a Messages API body for the upstream's model name. Field by field
 * (docs/inference-fields.md):
 * - `tool_choice` is sent only with tools (the API refuses it alone); `allowed_tools` is served by
 *   sending only the allowed tools; `parallel_tool_calls: false` is `disable_parallel_tool_use`.
 * - When both `temperature` and `top_p` are set, only `temperature` is sent: current Claude models
 *   refuse the pair, and chat clients often send `top_p: 1` out of habit.
 * - A JSON schema output format is `output_config.format`; a reasoning effort is
 *   `output_config.effort` with adaptive thinking; the end-user id is `metadata.user_id`.
 * - Mid-conversation system turns join the system prompt in order; reasoning parts go back only as
 *   Anthropic's own signed or redacted thinking.
 */
export function toAnthropicRequest(request: CanonicalRequest, upstreamModel: string, defaultMaxTokens: number = DEFAULT_MAX_TOKENS): Record<string, unknown> {
  checkAnthropicUpstream(request);
  const system = [request.system ?? '', ...request.messages.filter((m) => m.role === 'system').map((m) => textOf(m.parts))].filter((text) => text).join('\n\n');
  const messages = anthropicMessages(request.messages);
  const choice = request.toolChoice;
  const allowed = choice && typeof choice === 'object' && 'allowed' in choice ? new Set(choice.allowed) : null;
  const tools = request.tools.filter((t) => !allowed || allowed.has(t.name));
  const toolChoice = anthropicToolChoice(request);
  const thinking = thinkingOf(request, messages);
  const effort = request.reasoning?.effort ? anthropicEffortOf(request.reasoning.effort) : null;
  const format = request.responseFormat?.type === 'json_schema' ? { type: 'json_schema', schema: request.responseFormat.schema } : null;
  const outputConfig = { ...(effort ? { effort } : {}), ...(format ? { format } : {}) };
  return {
    model: upstreamModel,
    max_tokens: request.maxOutputTokens ?? defaultMaxTokens,
    ...(system ? { system } : {}),
    messages,
    ...(tools.length
      ? {
          tools: tools.map((t) => ({
            name: t.name,
            ...(t.description ? { description: t.description } : {}),
            input_schema: { type: 'object', ...t.parameters },
            ...(t.strict ? { strict: true } : {}),
          })),
          ...(toolChoice ? { tool_choice: toolChoice } : {}),
        }
      : {}),
    ...(request.stop.length ? { stop_sequences: request.stop } : {}),
    ...(request.temperature !== null ? { temperature: request.temperature } : {}),
    ...(request.topP !== null && request.temperature === null ? { top_p: request.topP } : {}),
    ...(request.topK !== null && request.topK !== undefined ? { top_k: request.topK } : {}),
    ...(thinking ? { thinking } : {}),
    ...(Object.keys(outputConfig).length ? { output_config: outputConfig } : {}),
    ...(request.user ? { metadata: { user_id: request.user } } : {}),
    stream: request.stream,
  };
}

// ---------------------------------------------------------------------------------------------------
// Answers. Upstream bodies are read defensively: unknown shapes become nothing, never an exception.

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

const STOP_FROM_ANTHROPIC: Record<string, StopReason> = {
  end_turn: 'end',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  tool_use: 'tool_use',
  refusal: 'refusal',
  // A paused server-tool turn ended this response normally; the context window running out is a length limit.
  pause_turn: 'end',
  model_context_window_exceeded: 'max_tokens',
};

function stopReasonOf(value: unknown): StopReason | null {
  return typeof value === 'string' ? (STOP_FROM_ANTHROPIC[value] ?? 'end') : null;
}

/** Anthropic usage buckets, as reported so far (null: not reported). */
interface UsageCounts {
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
}

const NO_COUNTS: UsageCounts = { input: null, output: null, cacheRead: null, cacheWrite: null };

/** Later counts overwrite earlier ones field by field: Anthropic's counts are cumulative totals, never increments. */
function mergeCounts(base: UsageCounts, raw: unknown): UsageCounts {
  const u = record(raw);
  return {
    input: numberOrNull(u.input_tokens) ?? base.input,
    output: numberOrNull(u.output_tokens) ?? base.output,
    cacheRead: numberOrNull(u.cache_read_input_tokens) ?? base.cacheRead,
    cacheWrite: numberOrNull(u.cache_creation_input_tokens) ?? base.cacheWrite,
  };
}

/** Canonical usage: input counts every input token, so Anthropic's separate cache buckets are added back in. */
function usageOfCounts(counts: UsageCounts): CanonicalUsage | null {
  if (counts.input === null || counts.output === null) return null;
  return {
    inputTokens: counts.input + (counts.cacheRead ?? 0) + (counts.cacheWrite ?? 0),
    outputTokens: counts.output,
    cacheReadTokens: counts.cacheRead,
    cacheWriteTokens: counts.cacheWrite,
    reasoningTokens: null,
  };
}

export function anthropicUsageOf(raw: unknown): CanonicalUsage | null {
  return usageOfCounts(mergeCounts(NO_COUNTS, raw));
}

/** The text of a tool_use block's input: what the model produced, as JSON text. */
function argumentsOf(input: unknown): string {
  return JSON.stringify(input ?? {});
}

/** An upstream Messages API `message` in canonical form: thinking becomes reasoning parts with their signatures; server-tool blocks are left out. */
export function fromAnthropicResponse(body: unknown): CanonicalResponse {
  const message = record(body);
  const parts: OutputPart[] = [];
  for (const raw of Array.isArray(message.content) ? message.content : []) {
    const block = record(raw);
    if (block.type === 'text' && typeof block.text === 'string' && block.text) parts.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') parts.push({ type: 'tool_call', id: String(block.id ?? ''), name: String(block.name ?? ''), arguments: argumentsOf(block.input) });
    else if (block.type === 'thinking') {
      const signature = typeof block.signature === 'string' && block.signature ? block.signature : null;
      parts.push({ type: 'reasoning', text: typeof block.thinking === 'string' ? block.thinking : '', summary: [], opaque: signature ? { family: 'anthropic', signature } : null });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      parts.push({ type: 'reasoning', text: '', summary: [], opaque: { family: 'anthropic', redactedData: block.data } });
    }
  }
  return { parts, stopReason: stopReasonOf(message.stop_reason), usage: anthropicUsageOf(message.usage) };
}

/** Blocks that become canonical parts (server-tool blocks have no canonical form). */
const PART_BLOCKS = new Set(['text', 'tool_use', 'thinking', 'redacted_thinking']);

/**
 * An upstream Messages SSE stream as canonical events.
 *
 * Parts: each text, tool_use, thinking or redacted_thinking block becomes the next canonical part
 * (server-tool blocks have no canonical form and are skipped, so part indices stay dense); a thinking
 * block's signature is a `reasoning_opaque` event. Usage: `message_start` reports input and cache
 * counts (also sent on at once as a `usage_start` event), `message_delta` the output count (and some servers repeat or correct the input counts
 * there); they are merged field by field and ONE usage event goes out right after the `stop` event at
 * `message_delta`, so a stream cut before `message_stop` is still billed on the upstream's own count.
 * (Should a server send another `message_delta`, its cumulative counts go out again and supersede.)
 * If no `message_delta` came, the usage known at `message_stop` goes out there.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  /** Upstream block index -> canonical part index, for blocks that have a canonical form. */
  private readonly parts = new Map<number, number>();
  /** Parts started and not yet ended. */
  private readonly open = new Set<number>();
  /** Tool-call parts whose arguments have produced no text yet. */
  private readonly noArguments = new Set<number>();
  private nextPart = 0;
  private counts: UsageCounts = NO_COUNTS;
  private usageSent = false;
  done = false;
  error: string | null = null;

  push(event: { event: string | null; data: string }): CanonicalEvent[] {
    let data: Record<string, unknown>;
    try {
      data = record(JSON.parse(event.data));
    } catch {
      return [];
    }
    // The event name and data.type agree on a well-formed stream; data.type is the one SDKs trust.
    const type = typeof data.type === 'string' ? data.type : event.event;
    switch (type) {
      case 'message_start': {
        this.counts = mergeCounts(this.counts, record(data.message).usage);
        // Input usage known at the start, for clients that show it there (not billed: a `usage` event follows).
        // Nothing is output yet: message_start's output count is a placeholder.
        const usage = usageOfCounts({ ...this.counts, output: 0 });
        return usage ? [{ type: 'usage_start', usage }] : [];
      }
      case 'content_block_start':
        return this.startBlock(numberOrNull(data.index), record(data.content_block));
      case 'content_block_delta':
        return this.delta(numberOrNull(data.index), record(data.delta));
      case 'content_block_stop':
        return this.endPart(this.parts.get(numberOrNull(data.index) ?? -1));
      case 'message_delta': {
        const out: CanonicalEvent[] = [];
        const reason = stopReasonOf(record(data.delta).stop_reason);
        if (reason) out.push({ type: 'stop', reason });
        this.counts = mergeCounts(this.counts, data.usage);
        return [...out, ...this.usageEvent()];
      }
      case 'message_stop': {
        this.done = true;
        const ended = [...this.open].flatMap((part) => this.endPart(part));
        return this.usageSent ? ended : [...ended, ...this.usageEvent()];
      }
      case 'error': {
        const error = record(data.error);
        this.error = typeof error.message === 'string' ? `${String(error.type ?? 'error')}: ${error.message}` : event.data.slice(0, 500);
        return [];
      }
      default:
        // `ping`, and events added to the API after this was written.
        return [];
    }
  }

  private startBlock(index: number | null, block: Record<string, unknown>): CanonicalEvent[] {
    if (index === null || !PART_BLOCKS.has(String(block.type))) return [];
    const part = this.nextPart++;
    this.parts.set(index, part);
    this.open.add(part);
    if (block.type === 'thinking') {
      const out: CanonicalEvent[] = [{ type: 'reasoning_delta', index: part, text: typeof block.thinking === 'string' ? block.thinking : '' }];
      if (typeof block.signature === 'string' && block.signature) out.push({ type: 'reasoning_opaque', index: part, opaque: { family: 'anthropic', signature: block.signature } });
      return out;
    }
    if (block.type === 'redacted_thinking') {
      return [{ type: 'reasoning_opaque', index: part, opaque: { family: 'anthropic', redactedData: typeof block.data === 'string' ? block.data : '' } }];
    }
    if (block.type === 'text') return typeof block.text === 'string' && block.text ? [{ type: 'text_delta', index: part, text: block.text }] : [];
    const out: CanonicalEvent[] = [{ type: 'tool_call_start', index: part, id: String(block.id ?? ''), name: String(block.name ?? '') }];
    // Anthropic starts every tool_use with `input: {}` and streams the input as JSON fragments; a
    // server that sends the whole input up front instead still gets its arguments through.
    const input = record(block.input);
    if (Object.keys(input).length) out.push({ type: 'tool_call_delta', index: part, argumentsDelta: argumentsOf(input) });
    else this.noArguments.add(part);
    return out;
  }

  private delta(index: number | null, delta: Record<string, unknown>): CanonicalEvent[] {
    const part = index === null ? undefined : this.parts.get(index);
    if (part === undefined) return [];
    if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text) return [{ type: 'text_delta', index: part, text: delta.text }];
    if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking) return [{ type: 'reasoning_delta', index: part, text: delta.thinking }];
    if (delta.type === 'signature_delta' && typeof delta.signature === 'string' && delta.signature) {
      return [{ type: 'reasoning_opaque', index: part, opaque: { family: 'anthropic', signature: delta.signature } }];
    }
    // The first fragment of a tool's input is often empty.
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json) {
      this.noArguments.delete(part);
      return [{ type: 'tool_call_delta', index: part, argumentsDelta: delta.partial_json }];
    }
    return [];
  }

  private endPart(part: number | undefined): CanonicalEvent[] {
    if (part === undefined || !this.open.delete(part)) return [];
    // A tool called without arguments streams no input text; its input is `{}`, as in a JSON answer.
    const empty: CanonicalEvent[] = this.noArguments.delete(part) ? [{ type: 'tool_call_delta', index: part, argumentsDelta: '{}' }] : [];
    return [...empty, { type: 'part_end', index: part }];
  }

  private usageEvent(): CanonicalEvent[] {
    const usage = usageOfCounts(this.counts);
    if (!usage) return [];
    this.usageSent = true;
    return [{ type: 'usage', usage }];
  }
}
