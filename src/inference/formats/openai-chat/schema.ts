import { z } from 'zod';

/**
 * The OpenAI chat-completions request contract, written once: the schema, which words every error, and
 * the fast path (fast-path.ts), whose checks are keyed by the schema's own fields. The constants the
 * two share are here.
 */

export const MESSAGE_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'] as const;
export const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_MODEL_LENGTH = 128;
export const MAX_TOOLS = 128;
export const TOOL_CHOICES = ['none', 'auto', 'required'] as const;

const contentPart = z.looseObject({ type: z.string().min(1) });
const message = z.looseObject({
  role: z.enum(MESSAGE_ROLES),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
});
const functionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().regex(FUNCTION_NAME, 'Function names are 1-64 letters, digits, "_" or "-"') }),
});
const positiveInt = z.number().int().positive();

/**
 * The sampling and output fields are checked for their type and OpenAI's documented range, so a slip is a 422
 * naming the field, on every route: a chat upstream would refuse it with its own words, which never reach the
 * client. Their contents beyond that (a tool choice's or response format's own fields) are the upstream's to judge.
 */
export const chatRequestSchema = z.looseObject({
  model: z.string().min(1).max(MAX_MODEL_LENGTH),
  messages: z.array(message).min(1, 'At least one message is required'),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  max_tokens: positiveInt.nullish(),
  max_completion_tokens: positiveInt.nullish(),
  tools: z.array(functionTool).max(MAX_TOOLS).optional(),
  n: z.literal(1, 'Only one choice per request is supported').nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  // Any whole number: clients send 64-bit seeds, past what zod's int() (safe integers) takes.
  seed: z.number().refine(Number.isInteger, 'Input should be a valid integer').nullish(),
  stop: z.union([z.string(), z.array(z.string())], 'stop is a string or an array of strings').nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  tool_choice: z.union([z.enum(TOOL_CHOICES), z.looseObject({ type: z.string() })], 'tool_choice is "none", "auto", "required" or an object with a type').nullish(),
  response_format: z.looseObject({ type: z.string() }).nullish(),
});
export type ChatRequest = z.output<typeof chatRequestSchema>;
/** The fields the schema names (others pass as they are). */
export type ChatField = keyof typeof chatRequestSchema.shape;
