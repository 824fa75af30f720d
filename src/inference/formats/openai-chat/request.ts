import type { CatalogModel } from '../../../catalog/catalog.schemas.js';
import { DomainError, type ValidationIssue } from '../../../shared/errors.js';
import { parseInput } from '../../../shared/validation.js';
import { REASONING_EFFORTS, type CanonicalMessage, type ClientFieldNames, type CanonicalPart, type CanonicalRequest, type CanonicalToolChoice, type ReasoningEffort, type ResponseFormat } from '../../canonical.js';
import { isPlainChatRequest } from './fast-path.js';
import { chatRequestSchema, type ChatRequest } from './schema.js';

/**
 * A chat-completions request, client side: validated (the fast path, else the schema), checked
 * against the model's capabilities, and read into the canonical (hub) form for an upstream of
 * another kind.
 */

export function parseChatRequest(body: unknown): ChatRequest {
  return isPlainChatRequest(body) ? body : parseInput(chatRequestSchema, body);
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

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

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

/** Where chat completions carry the settings a translating provider may refuse. */
const CHAT_FIELD_NAMES: ClientFieldNames = { responseFormat: 'response_format', toolChoice: 'tool_choice', topK: 'top_k', temperature: 'temperature' };

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
    fieldNames: CHAT_FIELD_NAMES,
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
