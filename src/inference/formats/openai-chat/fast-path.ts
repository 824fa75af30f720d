import { chatRequestSchema, FUNCTION_NAME, MAX_MODEL_LENGTH, MAX_TOOLS, MESSAGE_ROLES, TOOL_CHOICES, type ChatField, type ChatRequest } from './schema.js';

/**
 * The chat request checked by hand, for the hot path: zod costs several times more per request. It
 * answers to the schema (schema.ts) field by field: `CHAT_FIELD_CHECKS` has one check per field the
 * schema names, its type requires exactly those fields (a field added to the schema without a check
 * does not compile), and the property test in test/unit/openai-chat.test.ts holds every check to the
 * schema's verdict.
 */

const ROLES: ReadonlySet<unknown> = new Set(MESSAGE_ROLES);
const CHOICES: ReadonlySet<unknown> = new Set(TOOL_CHOICES);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isOptionalLimit = (value: unknown) => value == null || (Number.isSafeInteger(value) && (value as number) > 0);
const isOptionalInRange = (value: unknown, min: number, max: number) => value == null || (typeof value === 'number' && value >= min && value <= max);
const isOptionalBoolean = (value: unknown) => value == null || typeof value === 'boolean';
const isOptionalTypedObject = (value: unknown) => value == null || (isObject(value) && typeof value.type === 'string');

function areMessages(messages: unknown): boolean {
  if (!Array.isArray(messages) || messages.length < 1) return false;
  for (const message of messages) {
    if (!isObject(message) || !ROLES.has(message.role)) return false;
    const content = message.content;
    if (content !== undefined && content !== null && typeof content !== 'string') {
      if (!Array.isArray(content)) return false;
      for (const part of content) if (!isObject(part) || typeof part.type !== 'string' || part.type.length < 1) return false;
    }
  }
  return true;
}

function areTools(tools: unknown): boolean {
  if (tools === undefined) return true;
  if (!Array.isArray(tools) || tools.length > MAX_TOOLS) return false;
  for (const tool of tools) {
    if (!isObject(tool) || tool.type !== 'function' || !isObject(tool.function)) return false;
    if (typeof tool.function.name !== 'string' || !FUNCTION_NAME.test(tool.function.name)) return false;
  }
  return true;
}

/**
 * For each field of `chatRequestSchema`: true only when the schema accepts the value as it is, absent
 * included (nothing to coerce, so the body itself is the parsed request).
 */
export const CHAT_FIELD_CHECKS: { readonly [F in ChatField]: (value: unknown) => boolean } = {
  model: (value) => typeof value === 'string' && value.length >= 1 && value.length <= MAX_MODEL_LENGTH,
  messages: areMessages,
  stream: (value) => value === undefined || typeof value === 'boolean',
  stream_options: (value) => value == null || (isObject(value) && (value.include_usage === undefined || typeof value.include_usage === 'boolean')),
  max_tokens: isOptionalLimit,
  max_completion_tokens: isOptionalLimit,
  tools: areTools,
  n: (value) => value == null || value === 1,
  temperature: (value) => isOptionalInRange(value, 0, 2),
  top_p: (value) => isOptionalInRange(value, 0, 1),
  frequency_penalty: (value) => isOptionalInRange(value, -2, 2),
  presence_penalty: (value) => isOptionalInRange(value, -2, 2),
  seed: (value) => value == null || Number.isInteger(value),
  stop: (value) => value == null || typeof value === 'string' || (Array.isArray(value) && value.every((s) => typeof s === 'string')),
  logprobs: isOptionalBoolean,
  top_logprobs: (value) => value == null || (Number.isSafeInteger(value) && isOptionalInRange(value, 0, 20)),
  parallel_tool_calls: isOptionalBoolean,
  tool_choice: (value) => CHOICES.has(value) || isOptionalTypedObject(value),
  response_format: isOptionalTypedObject,
};

const FIELDS = Object.keys(chatRequestSchema.shape) as ChatField[];
/** The fields whose check refuses absence (a body must carry them): checked on every body. */
const REQUIRED = FIELDS.filter((field) => !CHAT_FIELD_CHECKS[field](undefined));
/**
 * The checks of the other fields, found by the keys a body carries: a body names few of the schema's
 * fields, and reading each absent one by name made the check several times slower.
 */
const OPTIONAL = new Map<string, (value: unknown) => boolean>(FIELDS.filter((field) => !REQUIRED.includes(field)).map((field) => [field, CHAT_FIELD_CHECKS[field]]));

/**
 * The common request, checked by hand: true only when `chatRequestSchema` accepts the body as it is.
 * Anything else, valid or not, goes through the schema, which alone words the errors.
 */
export function isPlainChatRequest(body: unknown): body is ChatRequest {
  if (!isObject(body)) return false;
  for (const field of REQUIRED) if (!CHAT_FIELD_CHECKS[field](body[field])) return false;
  for (const key in body) {
    const check = OPTIONAL.get(key);
    if (check && !check(body[key])) return false;
  }
  return true;
}
