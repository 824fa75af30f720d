import { z } from 'zod';
import type { TokenUsage } from '../../billing/cost.js';
import type { CatalogModel } from '../../catalog/catalog.schemas.js';
import { DomainError, type ValidationIssue } from '../../shared/errors.js';
import { parseInput } from '../../shared/validation.js';
import {
  REASONING_EFFORTS,
  type CanonicalEvent,
  type CanonicalMessage,
  type CanonicalPart,
  type CanonicalRequest,
  type CanonicalResponse,
  type CanonicalToolChoice,
  type CanonicalUsage,
  type ReasoningEffort,
  type ResponseFormat,
  type StopReason,
  type StreamEncoder,
} from '../canonical.js';

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
const TOOL_CHOICES = ['none', 'auto', 'required'] as const;

/**
 * The sampling and output fields are checked for their type and OpenAI's documented range, so a slip is a 422
 * naming the field, on every route: a chat upstream would refuse it with its own words, which never reach the
 * client. Their contents beyond that (a tool choice's or response format's own fields) are the upstream's to judge.
 */
export const chatRequestSchema = z.looseObject({
  model: z.string().min(1).max(128),
  messages: z.array(message).min(1, 'At least one message is required'),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  max_tokens: positiveInt.nullish(),
  max_completion_tokens: positiveInt.nullish(),
  tools: z.array(functionTool).max(128).optional(),
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

export function parseChatRequest(body: unknown): ChatRequest {
  return isPlainChatRequest(body) ? body : parseInput(chatRequestSchema, body);
}

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
    (TOOL_CHOICES.includes(toolChoice as never) || isOptionalTypedObject(toolChoice)) &&
    isOptionalTypedObject(body.response_format)
  );
}

/**
 * The common request, checked by hand: true only when `chatRequestSchema` accepts the body as it is
 * (same fields, nothing to coerce), so the body itself is the parsed request. Anything else, valid or
 * not, goes through the schema, which alone words the errors. Zod costs several times more per request
 * on the hot path than this.
 */
function isPlainChatRequest(body: unknown): body is ChatRequest {
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

// ---------------------------------------------------------------------------------------------------
// Through the canonical hub: a chat-completions client served by an upstream of another kind.

const STOP_TO_FINISH: Record<StopReason, string> = { end: 'stop', max_tokens: 'length', tool_use: 'tool_calls', stop_sequence: 'stop', refusal: 'content_filter' };

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p?.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

function partsOfContent(content: unknown): CanonicalPart[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  const parts: CanonicalPart[] = [];
  for (const p of content) {
    if (p?.type === 'text' && typeof p.text === 'string') parts.push({ type: 'text', text: p.text });
    else if (p?.type === 'image_url') {
      const url = typeof p.image_url === 'string' ? p.image_url : p.image_url?.url;
      if (typeof url === 'string') parts.push({ type: 'image', image: { kind: 'url', url } });
    }
  }
  return parts;
}

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** Chat `response_format` in canonical form; a malformed one is an issue (the upstream would refuse it too). */
function responseFormatOf(format: unknown, issues: ValidationIssue[]): ResponseFormat | null {
  if (!isObject(format)) return null;
  if (format.type === 'text' || format.type === 'json_object') return { type: format.type };
  if (format.type === 'json_schema' && isObject(format.json_schema) && isObject(format.json_schema.schema)) {
    const spec = format.json_schema;
    return {
      type: 'json_schema',
      name: isNonEmptyString(spec.name) ? spec.name : 'response',
      description: typeof spec.description === 'string' ? spec.description : null,
      schema: spec.schema as Record<string, unknown>,
      strict: typeof spec.strict === 'boolean' ? spec.strict : null,
    };
  }
  issues.push({ loc: ['response_format'], msg: 'response_format is {"type": "text"}, {"type": "json_object"} or {"type": "json_schema", "json_schema": {"name", "schema"}}', type: 'value_error' });
  return null;
}

function toolChoiceOf(choice: unknown): CanonicalToolChoice | null {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (!isObject(choice)) return null;
  if (isObject(choice.function) && isNonEmptyString(choice.function.name)) return { name: choice.function.name };
  if (choice.type === 'allowed_tools' && isObject(choice.allowed_tools) && Array.isArray(choice.allowed_tools.tools)) {
    const names = choice.allowed_tools.tools.map((t: any) => t?.function?.name ?? t?.name).filter(isNonEmptyString);
    return { allowed: names, mode: choice.allowed_tools.mode === 'required' ? 'required' : 'auto' };
  }
  return null;
}

/**
 * Fields of a chat request that change the answer and that an upstream of another kind cannot
 * honour: fine when the request passes straight through to a chat upstream, refused (each named)
 * when it must be translated. Neutral values (penalties of 0, `logprobs: false`, an empty bias) are
 * the defaults and raise nothing.
 */
function untranslatableOf(raw: Record<string, any>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const refuse = (field: string, what: string) => issues.push({ loc: [field], msg: `${what} is not available for this model; leave ${field} out`, type: 'value_error' });
  if (raw.logprobs === true) refuse('logprobs', 'Log probabilities are');
  if (raw.top_logprobs != null) refuse('top_logprobs', 'Log probabilities are');
  if (isObject(raw.logit_bias) && Object.keys(raw.logit_bias).length) refuse('logit_bias', 'Token bias is');
  if (isNumber(raw.frequency_penalty) && raw.frequency_penalty !== 0) refuse('frequency_penalty', 'A frequency penalty is');
  if (isNumber(raw.presence_penalty) && raw.presence_penalty !== 0) refuse('presence_penalty', 'A presence penalty is');
  if (Array.isArray(raw.modalities) && raw.modalities.includes('audio')) refuse('modalities', 'Audio output is');
  if (raw.audio != null) refuse('audio', 'Audio output is');
  if (raw.functions != null) refuse('functions', 'Legacy functions are (send tools)');
  if (raw.function_call != null) refuse('function_call', 'Legacy function_call is (send tool_choice)');
  if (raw.reasoning_effort != null && !REASONING_EFFORTS.includes(raw.reasoning_effort)) {
    issues.push({ loc: ['reasoning_effort'], msg: `reasoning_effort is one of ${REASONING_EFFORTS.join(', ')}`, type: 'enum' });
  }
  (raw.messages as unknown[]).forEach((m: any, i) => {
    if (!Array.isArray(m?.content)) return;
    m.content.forEach((part: any, j: number) => {
      if (part?.type === 'input_audio' || part?.type === 'file') issues.push({ loc: ['messages', i, 'content', j, 'type'], msg: `${part.type} parts are not available for this model`, type: 'value_error' });
    });
  });
  return issues;
}

/**
 * A chat-completions request in canonical form: system and developer turns become the system
 * prompt, tool turns tool results. docs/inference-fields.md lists every field and what becomes of it.
 */
export function chatToCanonical(request: ChatRequest): CanonicalRequest {
  const system: string[] = [];
  const messages: CanonicalMessage[] = [];
  const push = (role: CanonicalMessage['role'], parts: CanonicalPart[]) => {
    const last = messages.at(-1);
    // Consecutive tool results (and whatever user text follows them) belong to one user turn.
    if (last && last.role === role && role === 'user' && last.parts.some((p) => p.type === 'tool_result')) last.parts.push(...parts);
    else messages.push({ role, parts });
  };
  for (const m of request.messages as Record<string, any>[]) {
    if (m.role === 'system' || m.role === 'developer') system.push(textOfContent(m.content));
    else if (m.role === 'user') push('user', partsOfContent(m.content));
    else if (m.role === 'assistant') {
      const calls: CanonicalPart[] = Array.isArray(m.tool_calls)
        ? m.tool_calls.map((c: any) => ({ type: 'tool_call', id: String(c?.id ?? ''), name: String(c?.function?.name ?? ''), arguments: String(c?.function?.arguments ?? '') }))
        : [];
      messages.push({ role: 'assistant', parts: [...partsOfContent(m.content), ...calls] });
    } else {
      // `tool` (and the legacy `function`) turns answer a call: tool results in a user turn.
      push('user', [{ type: 'tool_result', toolCallId: String(m.tool_call_id ?? m.name ?? ''), content: textOfContent(m.content), isError: false }]);
    }
  }
  const raw = request as Record<string, any>;
  const untranslatable = untranslatableOf(raw);
  const effort = REASONING_EFFORTS.includes(raw.reasoning_effort) ? (raw.reasoning_effort as ReasoningEffort) : null;
  const user = isNonEmptyString(raw.safety_identifier) ? raw.safety_identifier : isNonEmptyString(raw.user) ? raw.user : null;
  return {
    model: request.model,
    system: system.length ? system.join('\n\n') : null,
    messages,
    tools: (request.tools ?? []).map((t) => ({
      name: t.function.name,
      description: typeof t.function.description === 'string' ? t.function.description : null,
      parameters: (t.function.parameters as Record<string, unknown> | undefined) ?? { type: 'object', properties: {} },
      ...(typeof t.function.strict === 'boolean' ? { strict: t.function.strict } : {}),
    })),
    toolChoice: toolChoiceOf(raw.tool_choice),
    maxOutputTokens: outputLimitOf(request),
    temperature: typeof raw.temperature === 'number' ? raw.temperature : null,
    topP: typeof raw.top_p === 'number' ? raw.top_p : null,
    stop: typeof raw.stop === 'string' ? [raw.stop] : Array.isArray(raw.stop) ? raw.stop.filter((s: unknown) => typeof s === 'string') : [],
    stream: request.stream === true,
    source: 'openai-chat',
    responseFormat: responseFormatOf(raw.response_format, untranslatable),
    reasoning: effort ? { effort, summary: null } : null,
    thinking: null,
    parallelToolCalls: typeof raw.parallel_tool_calls === 'boolean' ? raw.parallel_tool_calls : null,
    user,
    metadata: isObject(raw.metadata) ? (raw.metadata as Record<string, string>) : null,
    serviceTier: typeof raw.service_tier === 'string' ? raw.service_tier : null,
    // Not a chat-completions field, but some chat clients send it for servers that take it (vLLM): Anthropic does.
    topK: isNumber(raw.top_k) ? raw.top_k : null,
    promptCacheKey: isNonEmptyString(raw.prompt_cache_key) ? raw.prompt_cache_key : null,
    verbosity: raw.verbosity === 'low' || raw.verbosity === 'medium' || raw.verbosity === 'high' ? raw.verbosity : null,
    untranslatable,
  };
}

/** Hosted tools a chat request asks for: `web_search_options` (OpenAI's search models). */
export function chatWithheldTools(request: ChatRequest): string[] {
  return (request as Record<string, unknown>).web_search_options != null ? ['web_search'] : [];
}

function publicUsageOf(usage: CanonicalUsage): object {
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

/** Canonical events as chat-completion chunks; usage is shown only when the client asked (`include_usage`). */
export class ChatStreamEncoder implements StreamEncoder {
  /** Canonical part index -> position among tool calls (chat numbers tool calls on their own). */
  private readonly toolIndex = new Map<number, number>();
  private finishReason: string | null = null;

  constructor(
    private readonly who: PublicIdentity,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(delta: object, finish: string | null = null): string {
    return `data: ${JSON.stringify({ id: this.who.id, object: 'chat.completion.chunk', created: this.who.created, model: this.who.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  }

  start(): string {
    return this.chunk({ role: 'assistant', content: '' });
  }

  event(event: CanonicalEvent): string {
    switch (event.type) {
      case 'text_delta':
        return this.chunk({ content: event.text });
      case 'reasoning_delta':
        return event.text ? this.chunk({ reasoning_content: event.text }) : '';
      case 'tool_call_start': {
        const index = this.toolIndex.size;
        this.toolIndex.set(event.index, index);
        return this.chunk({ tool_calls: [{ index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }] });
      }
      case 'tool_call_delta':
        return this.chunk({ tool_calls: [{ index: this.toolIndex.get(event.index) ?? 0, function: { arguments: event.argumentsDelta } }] });
      case 'stop':
        this.finishReason = STOP_TO_FINISH[event.reason];
        return this.chunk({}, this.finishReason);
      case 'part_end':
      case 'usage':
      case 'usage_start':
      case 'reasoning_opaque':
        return '';
    }
  }

  finish(usage: CanonicalUsage | null): string {
    let out = this.finishReason === null ? this.chunk({}, 'stop') : '';
    if (this.includeUsage && usage) {
      out += `data: ${JSON.stringify({ id: this.who.id, object: 'chat.completion.chunk', created: this.who.created, model: this.who.model, choices: [], usage: publicUsageOf(usage) })}\n\n`;
    }
    return `${out}data: [DONE]\n\n`;
  }

  fail(message: string, code: string): string {
    return `data: ${JSON.stringify({ error: { message, type: 'server_error', code, param: null } })}\n\n`;
  }
}
