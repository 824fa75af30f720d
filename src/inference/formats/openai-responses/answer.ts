import { totalTokens, type CanonicalRequest, type CanonicalResponse, type CanonicalTool, type CanonicalUsage, type OutputPart, type ReasoningPart, type ResponseIdentity, type StopReason } from '../../canonical.js';
import { encryptedContentOf } from './reasoning.js';

/**
 * Canonical responses as Responses JSON: only documented fields, our own ids and the public model id,
 * with every field the `openai` SDK's `Response` type requires.
 */

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponsesOutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
}
export interface ResponsesMessageItem {
  id: string;
  type: 'message';
  status: ItemStatus;
  role: 'assistant';
  content: ResponsesOutputText[];
}
export interface ResponsesFunctionCallItem {
  id: string;
  type: 'function_call';
  status: ItemStatus;
  call_id: string;
  name: string;
  arguments: string;
  namespace?: string;
}
export interface ResponsesCustomToolCallItem {
  id: string;
  type: 'custom_tool_call';
  status: ItemStatus;
  call_id: string;
  name: string;
  input: string;
  namespace?: string;
}
export interface ResponsesReasoningItem {
  id: string;
  type: 'reasoning';
  status: ItemStatus;
  summary: { type: 'summary_text'; text: string }[];
  content?: { type: 'reasoning_text'; text: string }[];
  encrypted_content?: string;
}
export type ResponsesOutputItem = ResponsesMessageItem | ResponsesFunctionCallItem | ResponsesCustomToolCallItem | ResponsesReasoningItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

type EchoedToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string } | { type: 'allowed_tools'; mode: 'auto' | 'required'; tools: { type: 'function'; name: string }[] } | { type: any };

/** The `response` object, with every field the SDK's `Response` type requires (bar its computed `output_text`). */
export interface ResponsesResponse {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: ResponsesOutputItem[];
  parallel_tool_calls: boolean;
  temperature: number | null;
  tool_choice: EchoedToolChoice;
  tools: any[];
  top_p: number | null;
  metadata: Record<string, string>;
  previous_response_id: string | null;
  store: boolean;
  access_programs: null;
  text?: { format: EchoedFormat; verbosity?: 'low' | 'medium' | 'high' };
  reasoning?: { effort: any; summary: 'auto' | 'concise' | 'detailed' | null };
  usage?: ResponsesUsage;
}

/** Our ids for a response's output items; the same scheme in JSON and streams, unique per response. */
const messageId = (who: ResponseIdentity, outputIndex: number) => `msg_${who.id}_${outputIndex}`;
const functionCallId = (who: ResponseIdentity, outputIndex: number) => `fc_${who.id}_${outputIndex}`;
const customCallId = (who: ResponseIdentity, outputIndex: number) => `ctc_${who.id}_${outputIndex}`;
const reasoningId = (who: ResponseIdentity, outputIndex: number) => `rs_${who.id}_${outputIndex}`;

/** The status of the item the model was producing when it stopped: cut short by the token limit, or done. */
export const lastItemStatus = (reason: StopReason | null): ItemStatus => (reason === 'max_tokens' ? 'incomplete' : 'completed');

export function responsesUsage(usage: CanonicalUsage): ResponsesUsage {
  // The Responses shape requires numbers here; an unreported bucket is reported as 0.
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0, cache_write_tokens: usage.cacheWriteTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: totalTokens(usage),
  };
}

/** How the client knows a tool the upstream called by its flat name (custom, namespaced), if not as a plain function. */
export function originOf(request: CanonicalRequest | undefined, name: string): CanonicalTool['origin'] {
  return request?.tools.find((t) => t.name === name)?.origin;
}

/** A custom tool's input from the function arguments it was called with (`{"input": "..."}`); other text as it is. */
export function customInputOf(args: string): string {
  try {
    const parsed = JSON.parse(args) as unknown;
    if (parsed !== null && typeof parsed === 'object' && typeof (parsed as { input?: unknown }).input === 'string') return (parsed as { input: string }).input;
  } catch {
    // Cut short or malformed: the text is the best account of what the model produced.
  }
  return args;
}

/** Whether reasoning text is shown as a summary (the client asked for one, as Codex does) or as reasoning text. */
export const showsSummary = (request: CanonicalRequest | undefined) => Boolean(request?.reasoning?.summary);

function reasoningOutputItem(part: ReasoningPart, id: string, status: ItemStatus, request: CanonicalRequest | undefined): ResponsesReasoningItem {
  const encrypted = encryptedContentOf(part);
  const summary = [...part.summary];
  let content: { type: 'reasoning_text'; text: string }[] | undefined;
  if (part.text && showsSummary(request)) summary.push(part.text);
  else if (part.text) content = [{ type: 'reasoning_text', text: part.text }];
  return {
    id,
    type: 'reasoning',
    status,
    summary: summary.map((text) => ({ type: 'summary_text', text })),
    ...(content ? { content } : {}),
    ...(encrypted ? { encrypted_content: encrypted } : {}),
  };
}

export function outputItem(part: OutputPart, outputIndex: number, who: ResponseIdentity, status: ItemStatus, request: CanonicalRequest | undefined): ResponsesOutputItem {
  if (part.type === 'text') {
    return { id: messageId(who, outputIndex), type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text: part.text, annotations: [] }] };
  }
  if (part.type === 'reasoning') return reasoningOutputItem(part, reasoningId(who, outputIndex), status, request);
  const origin = originOf(request, part.name);
  const namespace = origin?.namespace ? { namespace: origin.namespace } : {};
  if (origin?.custom) {
    return { id: customCallId(who, outputIndex), type: 'custom_tool_call', status, call_id: part.id, name: origin.name, input: customInputOf(part.arguments), ...namespace };
  }
  return { id: functionCallId(who, outputIndex), type: 'function_call', status, call_id: part.id, name: origin?.name ?? part.name, arguments: part.arguments, ...namespace };
}

/** The tool_choice echoed in the response, in the client's names. */
function echoedToolChoice(request: CanonicalRequest | undefined): EchoedToolChoice {
  const choice = request?.toolChoice ?? 'auto';
  if (typeof choice === 'string') return choice;
  if ('name' in choice) return { type: 'function', name: originOf(request, choice.name)?.name ?? choice.name };
  if ('allowed' in choice) return { type: 'allowed_tools', mode: choice.mode, tools: choice.allowed.map((name) => ({ type: 'function', name: originOf(request, name)?.name ?? name })) };
  return { type: choice.hosted };
}

/** The tools echoed in the response: the client's own list when known, else the canonical functions. */
function echoedTools(request: CanonicalRequest | undefined, clientTools: unknown[] | undefined): any[] {
  if (clientTools) return clientTools;
  // `strict` is carried only when the client set it; say what was asked.
  return (request?.tools ?? []).map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: t.strict ?? false }));
}

type EchoedFormat = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict: boolean };

function echoedFormat(request: CanonicalRequest | undefined): EchoedFormat {
  const format = request?.responseFormat;
  if (!format || format.type !== 'json_schema') return { type: format?.type ?? 'text' };
  return { type: 'json_schema', name: format.name, schema: format.schema, ...(format.description ? { description: format.description } : {}), strict: format.strict ?? false };
}

/** What a response echoes of the client's request beyond the canonical form. */
export interface ResponsesEcho {
  /** The client's `tools`, as sent (custom, namespace and hosted tools included). */
  tools?: unknown[];
  /** The stored response this one continues (expanded into the input before parsing). */
  previousResponseId?: string | null;
  /** Whether the response is kept (`store`, default true). */
  store?: boolean;
}

/**
 * The response envelope. Request settings are echoed from `request` when given (instructions are the
 * canonical system text); otherwise the fields get neutral values.
 */
export function responseObject(
  who: ResponseIdentity,
  status: ResponseStatus,
  output: ResponsesOutputItem[],
  usage: CanonicalUsage | null,
  request: CanonicalRequest | undefined,
  error: { code: string; message: string } | null = null,
  echo: ResponsesEcho = {},
): ResponsesResponse {
  return {
    id: `resp_${who.id}`,
    object: 'response',
    created_at: who.created,
    status,
    error,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request?.system ?? null,
    max_output_tokens: request?.maxOutputTokens ?? null,
    model: who.model,
    output,
    parallel_tool_calls: request?.parallelToolCalls ?? true,
    temperature: request?.temperature ?? null,
    tool_choice: echoedToolChoice(request),
    tools: echoedTools(request, echo.tools),
    top_p: request?.topP ?? null,
    metadata: request?.metadata ?? {},
    previous_response_id: echo.previousResponseId ?? null,
    store: echo.store ?? true,
    access_programs: null,
    text: { format: echoedFormat(request), ...(request?.verbosity ? { verbosity: request.verbosity } : {}) },
    ...(request?.reasoning ? { reasoning: { effort: request.reasoning.effort, summary: request.reasoning.summary } } : {}),
    ...(usage ? { usage: responsesUsage(usage) } : {}),
  };
}

/** A complete response as Responses JSON: one output item per canonical part, in part order. */
export function renderResponse(response: CanonicalResponse, who: ResponseIdentity, request?: CanonicalRequest, echo: ResponsesEcho = {}): ResponsesResponse {
  const last = response.parts.length - 1;
  const output = response.parts.map((part, i) => outputItem(part, i, who, i === last ? lastItemStatus(response.stopReason) : 'completed', request));
  return responseObject(who, response.stopReason === 'max_tokens' ? 'incomplete' : 'completed', output, response.usage, request, null, echo);
}
