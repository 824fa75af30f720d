import type { CanonicalImage, CanonicalMessage, CanonicalPart, CanonicalRequest } from '../../canonical.js';
import type { ValidationIssue } from '../../../shared/errors.js';
import { textOf, toolInputOf } from '../../canonical.js';
import { anthropicEffortOf, commonIssues, fieldLoc, refuseFields } from '../fields.js';

/**
 * The `anthropic` upstream kind, requests: a canonical request as a Messages API body (answers are
 * read in answer.ts and stream.ts). No HTTP here.
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
