import { TOOL_CHOICES, type ChatRequest } from './schema.js';

/**
 * The chat request checked by hand, for the hot path: zod costs several times more per request.
 */

const MESSAGE_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isOptionalLimit = (value: unknown) => value == null || (Number.isSafeInteger(value) && (value as number) > 0);
const isOptionalInRange = (value: unknown, min: number, max: number) => value == null || (typeof value === 'number' && value >= min && value <= max);
const isOptionalBoolean = (value: unknown) => value == null || typeof value === 'boolean';
const isOptionalTypedObject = (value: unknown) => value == null || (isObject(value) && typeof value.type === 'string');

/** The sampling and output fields as `chatRequestSchema` checks them. */
function samplingFieldsAreValid(body: Record<string, unknown>): boolean {
  const { stop, seed, tool_choice: toolChoice } = body;
  return (
    isOptionalInRange(body.temperature, 0, 2) &&
    isOptionalInRange(body.top_p, 0, 1) &&
    isOptionalInRange(body.frequency_penalty, -2, 2) &&
    isOptionalInRange(body.presence_penalty, -2, 2) &&
    (seed == null || Number.isInteger(seed)) &&
    (stop == null || typeof stop === 'string' || (Array.isArray(stop) && stop.every((s) => typeof s === 'string'))) &&
    isOptionalBoolean(body.logprobs) &&
    (body.top_logprobs == null || (Number.isSafeInteger(body.top_logprobs) && isOptionalInRange(body.top_logprobs, 0, 20))) &&
    isOptionalBoolean(body.parallel_tool_calls) &&
    ((TOOL_CHOICES as readonly unknown[]).includes(toolChoice) || isOptionalTypedObject(toolChoice)) &&
    isOptionalTypedObject(body.response_format)
  );
}

/**
 * The common request, checked by hand: true only when `chatRequestSchema` accepts the body as it is
 * (same fields, nothing to coerce), so the body itself is the parsed request. Anything else, valid or
 * not, goes through the schema, which alone words the errors. Zod costs several times more per request
 * on the hot path than this.
 */
export function isPlainChatRequest(body: unknown): body is ChatRequest {
  if (!isObject(body)) return false;
  const { model, messages, stream, stream_options: streamOptions, tools, n } = body;
  if (typeof model !== 'string' || model.length < 1 || model.length > 128) return false;
  if (!Array.isArray(messages) || messages.length < 1) return false;
  for (const message of messages) {
    if (!isObject(message) || typeof message.role !== 'string' || !MESSAGE_ROLES.has(message.role)) return false;
    const content = message.content;
    if (content !== undefined && content !== null && typeof content !== 'string') {
      if (!Array.isArray(content)) return false;
      for (const part of content) if (!isObject(part) || typeof part.type !== 'string' || part.type.length < 1) return false;
    }
  }
  if (stream !== undefined && typeof stream !== 'boolean') return false;
  if (streamOptions != null && (!isObject(streamOptions) || (streamOptions.include_usage !== undefined && typeof streamOptions.include_usage !== 'boolean'))) return false;
  if (!isOptionalLimit(body.max_tokens) || !isOptionalLimit(body.max_completion_tokens)) return false;
  if (tools !== undefined) {
    if (!Array.isArray(tools) || tools.length > 128) return false;
    for (const tool of tools) {
      if (!isObject(tool) || tool.type !== 'function' || !isObject(tool.function)) return false;
      if (typeof tool.function.name !== 'string' || !FUNCTION_NAME.test(tool.function.name)) return false;
    }
  }
  return (n == null || n === 1) && samplingFieldsAreValid(body);
}
