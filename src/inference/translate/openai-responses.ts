import { z } from 'zod';
import {
  totalTokens,
  type CanonicalEvent,
  type CanonicalMessage,
  type CanonicalPart,
  type CanonicalRequest,
  type CanonicalResponse,
  type CanonicalToolChoice,
  type CanonicalUsage,
  type OutputPart,
  type ResponseIdentity,
  type StopReason,
  type StreamEncoder,
} from '../canonical.js';
import { parseInput } from '../../shared/validation.js';

/**
 * The OpenAI Responses wire format (`POST /v1/responses`), client side: request -> canonical, and
 * canonical responses and event streams -> Responses JSON and SSE. Output carries only documented
 * fields, our own ids and the public model id. Shapes follow the `openai` SDK's Responses types; the
 * SDK's stream accumulator checks item ids, output indices and event order, so the encoder keeps them
 * exact.
 *
 * The gateway is stateless: no `previous_response_id`/`conversation`, no hosted tools, no file ids.
 */

// ---------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------

const text = z.string();
/**
 * Fields that take "a string or a list" read a string as a one-element list. Normalizing first (rather
 * than a union) keeps the issues inside a malformed list at their own locations.
 */
const stringAsList = <S extends z.ZodType>(list: S, wrap: (text: string) => unknown) => z.preprocess((value) => (typeof value === 'string' ? [wrap(value)] : value), list);

const inputText = z.looseObject({ type: z.literal('input_text'), text });
const outputText = z.looseObject({ type: z.literal('output_text'), text });
const inputImage = z
  .looseObject({ type: z.literal('input_image'), image_url: z.string().min(1).nullish(), file_id: z.string().nullish() })
  .superRefine((part, ctx) => {
    // We keep no file store, so an uploaded file id names nothing we could send on.
    if (!part.image_url) ctx.addIssue({ code: 'custom', path: ['image_url'], message: 'Send images as image_url (an https or data: URL); file ids are not supported', params: { type: 'missing' } });
  });

const contentPart = z.discriminatedUnion('type', [inputText, inputImage, outputText], {
  error: (issue) => (issue.code === 'invalid_union' ? 'Content parts are input_text, input_image or output_text' : undefined),
});

const messageItem = z
  .looseObject({
    type: z.literal('message'),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: stringAsList(z.array(contentPart), (text) => ({ type: 'input_text', text })),
  })
  .superRefine((item, ctx) => {
    // System and developer messages become the canonical `system` text, which has no room for images.
    if (item.role === 'system' || item.role === 'developer') {
      item.content.forEach((part, j) => {
        if (part.type === 'input_image') ctx.addIssue({ code: 'custom', path: ['content', j, 'type'], message: `${item.role} messages carry text only` });
      });
    }
  });

const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

const toolOutputPart = z.discriminatedUnion('type', [inputText], {
  error: (issue) => (issue.code === 'invalid_union' ? 'Function call outputs carry text only (input_text parts)' : undefined),
});
const functionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: stringAsList(z.array(toolOutputPart), (text) => ({ type: 'input_text', text })),
});

const inputItem = z.preprocess(
  // A message item may leave out `type` (the SDK's EasyInputMessage); give it one so the union can dispatch.
  (value) => (value !== null && typeof value === 'object' && !Array.isArray(value) && !('type' in value) ? { ...value, type: 'message' } : value),
  z.discriminatedUnion('type', [messageItem, functionCallItem, functionCallOutputItem], {
    error: (issue) => (issue.code === 'invalid_union' ? 'Input items are message, function_call or function_call_output' : undefined),
  }),
);
type InputItem = z.output<typeof inputItem>;

const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Function names are 1-64 letters, digits, "_" or "-"'),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
const tool = z.discriminatedUnion('type', [functionTool], {
  error: (issue) => (issue.code === 'invalid_union' ? 'Only function tools are supported; hosted tools (web search, file search, ...) are not available through this gateway' : undefined),
});

const toolChoice = z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.literal('function'), name: z.string().min(1) })], {
  error: 'tool_choice is "auto", "none", "required" or {"type": "function", "name": ...}',
});

/** A field the gateway cannot honour because it keeps no conversation state between requests. */
const statefulField = (what: string) =>
  z.unknown().optional().superRefine((value, ctx) => {
    if (value !== undefined && value !== null) ctx.addIssue({ code: 'custom', message: `${what} is not supported: the gateway keeps no conversation state; send the whole conversation in input` });
  });

const responsesRequestSchema = z
  .looseObject({
    model: z.string().min(1).max(128),
    // A string input is one user message.
    input: stringAsList(z.array(inputItem).min(1, 'At least one input item is required'), (text) => ({ type: 'message', role: 'user', content: text })),
    instructions: z.string().nullish(),
    tools: z.array(tool).max(128).nullish(),
    tool_choice: toolChoice.nullish(),
    max_output_tokens: z.number().int().positive().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    stream: z.boolean().nullish(),
    previous_response_id: statefulField('previous_response_id'),
    conversation: statefulField('conversation'),
  })
  .superRefine((body, ctx) => {
    // System and developer items alone leave the model nothing to answer.
    if (body.input.length > 0 && body.input.every((item) => item.type === 'message' && (item.role === 'system' || item.role === 'developer'))) {
      ctx.addIssue({ code: 'custom', path: ['input'], message: 'At least one user, assistant or function call item is required' });
    }
  });
type ResponsesRequest = z.output<typeof responsesRequestSchema>;

/** Validates a Responses request body (422 with located issues) and translates it to the hub format. */
export function parseResponsesRequest(body: unknown): CanonicalRequest {
  const request = parseInput(responsesRequestSchema, body);
  const { system, messages } = conversationOf(request.input);
  if (request.instructions) system.unshift(request.instructions);
  return {
    model: request.model,
    system: system.length ? system.join('\n\n') : null,
    messages,
    tools: (request.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description ?? null,
      // A function without parameters takes none; upstreams want a schema either way.
      parameters: t.parameters ?? { type: 'object', properties: {} },
    })),
    toolChoice: toolChoiceOf(request.tool_choice),
    maxOutputTokens: request.max_output_tokens ?? null,
    temperature: request.temperature ?? null,
    topP: request.top_p ?? null,
    stop: [],
    stream: request.stream ?? false,
  };
}

/**
 * Input items -> system texts and canonical messages. An assistant turn in the Responses format is a
 * message item followed by function_call items, so function calls join the assistant message before
 * them; consecutive function_call_output items become one user message of tool results (a user
 * message item after them starts a new one).
 */
function conversationOf(items: InputItem[]): { system: string[]; messages: CanonicalMessage[] } {
  const system: string[] = [];
  const messages: CanonicalMessage[] = [];
  // The kind of the last non-system item, so tool results only merge with tool results.
  let lastKind: InputItem['type'] | null = null;
  for (const item of items) {
    const last = messages.at(-1);
    switch (item.type) {
      case 'message': {
        if (item.role === 'system' || item.role === 'developer') {
          system.push(item.content.map((p) => (p.type === 'input_image' ? '' : p.text)).join(''));
          continue;
        }
        messages.push({ role: item.role, parts: item.content.map(partOf) });
        break;
      }
      case 'function_call': {
        const part: CanonicalPart = { type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments };
        if (last?.role === 'assistant') last.parts.push(part);
        else messages.push({ role: 'assistant', parts: [part] });
        break;
      }
      case 'function_call_output': {
        const content = item.output.map((p) => p.text).join('');
        const part: CanonicalPart = { type: 'tool_result', toolCallId: item.call_id, content, isError: false };
        if (last?.role === 'user' && lastKind === 'function_call_output') last.parts.push(part);
        else messages.push({ role: 'user', parts: [part] });
        break;
      }
    }
    lastKind = item.type;
  }
  return { system, messages };
}

function partOf(part: z.output<typeof contentPart>): CanonicalPart {
  // The image `detail` hint has no canonical counterpart and is dropped.
  // The schema refuses an image without image_url, so it is there.
  if (part.type === 'input_image') return { type: 'image', image: { kind: 'url', url: part.image_url! } };
  return { type: 'text', text: part.text };
}

function toolChoiceOf(choice: ResponsesRequest['tool_choice']): CanonicalToolChoice | null {
  if (choice === undefined || choice === null) return null;
  return typeof choice === 'string' ? choice : { name: choice.name };
}

// ---------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------

type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

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
}
export type ResponsesOutputItem = ResponsesMessageItem | ResponsesFunctionCallItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

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
  tool_choice: 'auto' | 'none' | 'required' | { type: 'function'; name: string };
  tools: { type: 'function'; name: string; description: string | null; parameters: Record<string, unknown>; strict: boolean }[];
  top_p: number | null;
  metadata: Record<string, string>;
  access_programs: null;
  usage?: ResponsesUsage;
}

/** Our ids for a response's output items; the same scheme in JSON and streams, unique per response. */
const messageId = (who: ResponseIdentity, outputIndex: number) => `msg_${who.id}_${outputIndex}`;
const functionCallId = (who: ResponseIdentity, outputIndex: number) => `fc_${who.id}_${outputIndex}`;

/** The status of the item the model was producing when it stopped: cut short by the token limit, or done. */
const lastItemStatus = (reason: StopReason | null): ItemStatus => (reason === 'max_tokens' ? 'incomplete' : 'completed');

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

function outputItem(part: OutputPart, outputIndex: number, who: ResponseIdentity, status: ItemStatus): ResponsesOutputItem {
  if (part.type === 'text') {
    return { id: messageId(who, outputIndex), type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text: part.text, annotations: [] }] };
  }
  return { id: functionCallId(who, outputIndex), type: 'function_call', status, call_id: part.id, name: part.name, arguments: part.arguments };
}

/**
 * The response envelope. Request settings are echoed from `request` when given (instructions are the
 * canonical system text); otherwise the fields get neutral values.
 */
function responseObject(
  who: ResponseIdentity,
  status: ResponseStatus,
  output: ResponsesOutputItem[],
  usage: CanonicalUsage | null,
  request: CanonicalRequest | undefined,
  error: { code: string; message: string } | null = null,
): ResponsesResponse {
  const choice = request?.toolChoice ?? 'auto';
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
    parallel_tool_calls: true,
    temperature: request?.temperature ?? null,
    tool_choice: typeof choice === 'string' ? choice : { type: 'function', name: choice.name },
    // `strict` is not carried through the hub, so no upstream enforces it: say so.
    tools: (request?.tools ?? []).map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: false })),
    top_p: request?.topP ?? null,
    metadata: {},
    access_programs: null,
    ...(usage ? { usage: responsesUsage(usage) } : {}),
  };
}

/** A complete response as Responses JSON: one output item per canonical part, in part order. */
export function renderResponse(response: CanonicalResponse, who: ResponseIdentity, request?: CanonicalRequest): ResponsesResponse {
  const last = response.parts.length - 1;
  const output = response.parts.map((part, i) => outputItem(part, i, who, i === last ? lastItemStatus(response.stopReason) : 'completed'));
  return responseObject(who, response.stopReason === 'max_tokens' ? 'incomplete' : 'completed', output, response.usage, request);
}

// ---------------------------------------------------------------------------------------------
// Stream
// ---------------------------------------------------------------------------------------------

/**
 * One output item being streamed. `state` is `open` while deltas may arrive, `ended` once the part
 * ended but its `.done` events are held back, `closed` once they were sent.
 */
type StreamItem = {
  outputIndex: number;
  state: 'open' | 'ended' | 'closed';
  status: ItemStatus;
} & ({ kind: 'text'; text: string } | { kind: 'tool_call'; id: string; name: string; arguments: string });

/**
 * Canonical events -> Responses SSE (`event: <type>` + `data: <json>`, a `sequence_number` on each).
 *
 * Each canonical part becomes one output item, numbered in order of appearance. The `.done` events
 * of an ended part are held until the next output event or the stop: only then is it known whether
 * the part was the one the token limit cut short, whose item the Responses format marks
 * `incomplete`. Parts an upstream never ended are closed at the stop or in `finish`.
 */
export class ResponsesStreamEncoder implements StreamEncoder {
  private sequence = 0;
  private readonly items: StreamItem[] = [];
  private readonly byPart = new Map<number, StreamItem>();
  /** An ended part whose `.done` events are still held back. */
  private held: StreamItem | null = null;
  private stopReason: StopReason | null = null;
  private usage: CanonicalUsage | null = null;

  constructor(
    private readonly who: ResponseIdentity,
    private readonly request?: CanonicalRequest,
  ) {}

  start(): string {
    const response = responseObject(this.who, 'in_progress', [], null, this.request);
    return this.frame('response.created', { response }) + this.frame('response.in_progress', { response });
  }

  event(event: CanonicalEvent): string {
    switch (event.type) {
      case 'text_delta': {
        let out = '';
        let item = this.byPart.get(event.index);
        if (!item) {
          out += this.release('completed');
          item = this.open(event.index, { kind: 'text', text: '' });
          // A message item is announced empty; its one content part follows in its own event.
          const added: ResponsesMessageItem = { id: this.itemId(item), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
          out += this.frame('response.output_item.added', { output_index: item.outputIndex, item: added });
          out += this.frame('response.content_part.added', { item_id: this.itemId(item), output_index: item.outputIndex, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
        }
        // A delta for a finished or mismatched part cannot be placed; drop it rather than corrupt the stream.
        if (item.kind !== 'text' || item.state !== 'open' || event.text === '') return out;
        if (this.held) out += this.release('completed');
        item.text += event.text;
        return out + this.frame('response.output_text.delta', { item_id: this.itemId(item), output_index: item.outputIndex, content_index: 0, delta: event.text, logprobs: [] });
      }
      case 'tool_call_start': {
        if (this.byPart.has(event.index)) return '';
        const out = this.release('completed');
        const item = this.open(event.index, { kind: 'tool_call', id: event.id, name: event.name, arguments: '' });
        return out + this.frame('response.output_item.added', { output_index: item.outputIndex, item: this.wireItem(item) });
      }
      case 'tool_call_delta': {
        const item = this.byPart.get(event.index);
        if (item?.kind !== 'tool_call' || item.state !== 'open' || event.argumentsDelta === '') return '';
        const out = this.release('completed');
        item.arguments += event.argumentsDelta;
        return out + this.frame('response.function_call_arguments.delta', { item_id: this.itemId(item), output_index: item.outputIndex, delta: event.argumentsDelta });
      }
      case 'part_end': {
        const item = this.byPart.get(event.index);
        if (item?.state !== 'open') return '';
        const out = this.release('completed');
        item.state = 'ended';
        this.held = item;
        return out;
      }
      case 'stop':
        this.stopReason = event.reason;
        return this.closeAll();
      case 'usage':
        this.usage = event.usage;
        return '';
    }
  }

  finish(usage: CanonicalUsage | null): string {
    const out = this.closeAll();
    const incomplete = this.stopReason === 'max_tokens';
    const response = responseObject(this.who, incomplete ? 'incomplete' : 'completed', this.output(), usage ?? this.usage, this.request);
    return out + this.frame(incomplete ? 'response.incomplete' : 'response.completed', { response });
  }

  fail(message: string, code: string): string {
    // Items never closed were cut short by the failure.
    for (const item of this.items) if (item.state !== 'closed') item.status = 'incomplete';
    const response = responseObject(this.who, 'failed', this.output(), this.usage, this.request, { code, message });
    return this.frame('response.failed', { response });
  }

  private open(index: number, body: { kind: 'text'; text: string } | { kind: 'tool_call'; id: string; name: string; arguments: string }): StreamItem {
    const item: StreamItem = { outputIndex: this.items.length, state: 'open', status: 'in_progress', ...body };
    this.items.push(item);
    this.byPart.set(index, item);
    return item;
  }

  /** Sends the `.done` events of the held part, if any. */
  private release(status: ItemStatus): string {
    const item = this.held;
    this.held = null;
    return item ? this.close(item, status) : '';
  }

  /** At the stop: closes every unclosed item; the last one gets the status the stop reason implies. */
  private closeAll(): string {
    this.held = null;
    const pending = this.items.filter((item) => item.state !== 'closed');
    return pending.map((item, i) => this.close(item, i === pending.length - 1 ? lastItemStatus(this.stopReason) : 'completed')).join('');
  }

  private close(item: StreamItem, status: ItemStatus): string {
    item.state = 'closed';
    item.status = status;
    const ref = { item_id: this.itemId(item), output_index: item.outputIndex };
    let out = '';
    if (item.kind === 'text') {
      out += this.frame('response.output_text.done', { ...ref, content_index: 0, text: item.text, logprobs: [] });
      out += this.frame('response.content_part.done', { ...ref, content_index: 0, part: { type: 'output_text', text: item.text, annotations: [] } });
    } else {
      out += this.frame('response.function_call_arguments.done', { ...ref, arguments: item.arguments });
    }
    return out + this.frame('response.output_item.done', { output_index: item.outputIndex, item: this.wireItem(item) });
  }

  private itemId(item: StreamItem): string {
    return item.kind === 'text' ? messageId(this.who, item.outputIndex) : functionCallId(this.who, item.outputIndex);
  }

  /** The item as the wire shows it now. */
  private wireItem(item: StreamItem): ResponsesOutputItem {
    const part: OutputPart = item.kind === 'text' ? { type: 'text', text: item.text } : { type: 'tool_call', id: item.id, name: item.name, arguments: item.arguments };
    return outputItem(part, item.outputIndex, this.who, item.status);
  }

  private output(): ResponsesOutputItem[] {
    return this.items.map((item) => this.wireItem(item));
  }

  private frame(type: string, payload: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...payload })}\n\n`;
  }
}
