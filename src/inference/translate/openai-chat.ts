import { z } from 'zod';
import type { TokenUsage } from '../../billing/cost.js';
import type { CatalogModel } from '../../catalog/catalog.schemas.js';
import { DomainError, type ValidationIssue } from '../../shared/errors.js';
import { parseInput } from '../../shared/validation.js';

/**
 * The OpenAI chat-completions wire format, client side: request validation, the worst-case size of a
 * request, and the public shape of responses and stream chunks (only known fields, our own id and the
 * public model id, so nothing the upstream adds ever reaches the client).
 */

const contentPart = z.looseObject({ type: z.string().min(1) });
const message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
});
const functionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Function names are 1-64 letters, digits, "_" or "-"') }),
});
const positiveInt = z.number().int().positive();

export const chatRequestSchema = z.looseObject({
  model: z.string().min(1).max(128),
  messages: z.array(message).min(1, 'At least one message is required'),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  max_tokens: positiveInt.nullish(),
  max_completion_tokens: positiveInt.nullish(),
  tools: z.array(functionTool).max(128).optional(),
  n: z.literal(1, 'Only one choice per request is supported').nullish(),
});
export type ChatRequest = z.output<typeof chatRequestSchema>;

export function parseChatRequest(body: unknown): ChatRequest {
  return parseInput(chatRequestSchema, body);
}

/** Checks what the catalog says this model can do; 422 naming the offending field. */
export function checkChatCapabilities(request: ChatRequest, model: CatalogModel): void {
  const issues: ValidationIssue[] = [];
  if (request.tools?.length && !model.capabilities.tools) issues.push({ loc: ['tools'], msg: `The model ${model.id} does not support tools`, type: 'value_error' });
  if (request.stream && !model.capabilities.streaming) issues.push({ loc: ['stream'], msg: `The model ${model.id} does not support streaming`, type: 'value_error' });
  if (!model.capabilities.vision) {
    request.messages.forEach((m, i) => {
      if (Array.isArray(m.content)) {
        m.content.forEach((part, j) => {
          if (part.type === 'image_url') issues.push({ loc: ['messages', i, 'content', j], msg: `The model ${model.id} does not accept images`, type: 'value_error' });
        });
      }
    });
  }
  const maxOutput = outputLimitOf(request);
  if (maxOutput !== null && model.maxOutputTokens !== null && maxOutput > model.maxOutputTokens) {
    const field = request.max_completion_tokens ? 'max_completion_tokens' : 'max_tokens';
    issues.push({ loc: [field], msg: `Input should be less than or equal to ${model.maxOutputTokens}`, type: 'less_than_equal' });
  }
  if (issues.length) throw new DomainError('validation_failed', 'Request validation failed', { issues });
}

export function outputLimitOf(request: ChatRequest): number | null {
  return request.max_completion_tokens ?? request.max_tokens ?? null;
}

/** Images are priced by the upstream in tokens we cannot see from here; each counts as this many. */
const IMAGE_TOKEN_ALLOWANCE = 2_000;

/**
 * An upper bound on the prompt's tokens: the UTF-8 bytes of everything sent except inline image data
 * (a byte-level tokenizer never makes more tokens than bytes), plus an allowance per image.
 */
export function promptTokenBound(request: ChatRequest): number {
  let images = 0;
  const text = JSON.stringify({ messages: request.messages, tools: request.tools ?? null }, (key, value) => {
    if (key === 'image_url') {
      images += 1;
      return null;
    }
    return value;
  });
  return Buffer.byteLength(text) + images * IMAGE_TOKEN_ALLOWANCE;
}

/** The plain text of the prompt, for estimating usage when the upstream never reported it. */
export function promptText(request: ChatRequest): string {
  return request.messages
    .map((m) => (typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p) => (typeof p.text === 'string' ? p.text : '')).join(' ') : ''))
    .join('\n');
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
