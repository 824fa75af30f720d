import { z } from 'zod';
import { createHash } from 'node:crypto';
import {
  REASONING_EFFORTS,
  textOf,
  totalTokens,
  type CanonicalEvent,
  type CanonicalImage,
  type CanonicalMessage,
  type CanonicalPart,
  type CanonicalRequest,
  type CanonicalResponse,
  type CanonicalTool,
  type CanonicalToolChoice,
  type CanonicalUsage,
  type OutputPart,
  type ReasoningOpaque,
  type ReasoningPart,
  type ResponseIdentity,
  type StopReason,
  type StreamEncoder,
} from '../canonical.js';
import type { ValidationIssue } from '../../shared/errors.js';
import { parseInput } from '../../shared/validation.js';
import { openUnion } from './open-union.js';

/**
 * The OpenAI Responses wire format (`POST /v1/responses`), client side: request -> canonical, and
 * canonical responses and event streams -> Responses JSON and SSE. Output carries only documented
 * fields, our own ids and the public model id. Shapes follow the `openai` SDK's Responses types; the
 * SDK's stream accumulator checks item ids, output indices and event order, so the encoder keeps them
 * exact.
 *
 * Stored responses (`previous_response_id`, `item_reference`) are expanded into the full input
 * before a request is parsed. Hosted tools are withheld and listed; custom and namespaced tools are
 * sent upstream as plain functions and their calls mapped back (docs/inference-fields.md).
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
// Assistant output echoed back: annotations and logprobs are the client's record, not input.
const outputText = z.looseObject({ type: z.literal('output_text'), text });
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: text });
const inputImage = z.looseObject({ type: z.literal('input_image'), image_url: z.string().min(1).nullish(), file_id: z.string().nullish() });

/** Content parts; other types (input_file, input_audio, ...) reach a native upstream as they are and are refused when translated. */
const contentPart = openUnion({ input_text: inputText, output_text: outputText, input_image: inputImage, refusal: refusalPart });
type ContentPart = z.output<typeof contentPart>;

const messageItem = z
  .looseObject({
    type: z.literal('message'),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: stringAsList(z.array(contentPart), (text) => ({ type: 'input_text', text })),
  })
  .superRefine((item, ctx) => {
    // System and developer messages become instructions, which have no room for images.
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
  namespace: z.string().nullish(),
});

/** Tool output: a string, or parts (text, images, files). */
const toolOutput = stringAsList(z.array(openUnion({ input_text: inputText, input_image: inputImage, output_text: outputText })), (text) => ({ type: 'input_text', text }));
const functionCallOutputItem = z.looseObject({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: toolOutput });

const customToolCallItem = z.looseObject({
  type: z.literal('custom_tool_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  input: z.string(),
  namespace: z.string().nullish(),
});
const customToolCallOutputItem = z.looseObject({ type: z.literal('custom_tool_call_output'), call_id: z.string().min(1), output: toolOutput });

const reasoningItem = z.looseObject({
  type: z.literal('reasoning'),
  summary: z.array(z.looseObject({ type: z.string(), text: z.string() })).nullish(),
  content: z.array(z.looseObject({ type: z.string(), text: z.string() })).nullish(),
  encrypted_content: z.string().nullish(),
});

const inputItem = z.preprocess(
  // A message item may leave out `type` (the SDK's EasyInputMessage); give it one so the union can dispatch.
  (value) => (value !== null && typeof value === 'object' && !Array.isArray(value) && !('type' in value) ? { ...value, type: 'message' } : value),
  openUnion({
    message: messageItem,
    function_call: functionCallItem,
    function_call_output: functionCallOutputItem,
    custom_tool_call: customToolCallItem,
    custom_tool_call_output: customToolCallOutputItem,
    reasoning: reasoningItem,
  }),
);
type InputItem = z.output<typeof inputItem>;

const functionName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'Function names are 1-64 letters, digits, "_" or "-"');
const functionTool = z.looseObject({
  type: z.literal('function'),
  name: functionName,
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
const customTool = z.looseObject({
  type: z.literal('custom'),
  name: functionName,
  description: z.string().nullish(),
  format: z.looseObject({ type: z.string(), syntax: z.string().nullish(), definition: z.string().nullish() }).nullish(),
});
const namespaceTool = z.looseObject({
  type: z.literal('namespace'),
  name: z.string().min(1),
  description: z.string().nullish(),
  tools: z.array(openUnion({ function: functionTool, custom: customTool })).min(1),
});
/** Function, custom and namespace tools; any other type is a hosted tool (web_search, file_search, mcp, ...). */
const tool = openUnion({ function: functionTool, custom: customTool, namespace: namespaceTool });

const toolChoice = z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.string().min(1) })], {
  error: 'tool_choice is "auto", "none", "required" or an object with a type',
});

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({ type: z.literal('json_schema'), name: z.string().min(1), schema: z.record(z.string(), z.unknown()), description: z.string().nullish(), strict: z.boolean().nullish() }),
]);

export const responsesRequestSchema = z
  .looseObject({
    model: z.string().min(1).max(128),
    // A string input is one user message.
    input: stringAsList(z.array(inputItem).min(1, 'At least one input item is required'), (text) => ({ type: 'message', role: 'user', content: text })),
    instructions: z.string().nullish(),
    tools: z.array(tool).max(128).nullish(),
    tool_choice: toolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    max_output_tokens: z.number().int().positive().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    stream: z.boolean().nullish(),
    text: z.looseObject({ format: textFormat.nullish(), verbosity: z.enum(['low', 'medium', 'high']).nullish() }).nullish(),
    reasoning: z
      .looseObject({ effort: z.enum(REASONING_EFFORTS).nullish(), summary: z.enum(['auto', 'concise', 'detailed']).nullish(), generate_summary: z.enum(['auto', 'concise', 'detailed']).nullish() })
      .nullish(),
    user: z.string().nullish(),
    safety_identifier: z.string().nullish(),
    metadata: z.record(z.string(), z.string()).nullish(),
    service_tier: z.string().nullish(),
    prompt_cache_key: z.string().nullish(),
    store: z.boolean().nullish(),
    include: z.array(z.string()).nullish(),
    truncation: z.enum(['auto', 'disabled']).nullish(),
    // The gateway keeps no Conversations API objects (previous_response_id is expanded before parsing).
    conversation: z.unknown().optional().superRefine((value, ctx) => {
      if (value !== undefined && value !== null) ctx.addIssue({ code: 'custom', message: 'conversation is not supported; send previous_response_id or the whole conversation in input' });
    }),
  })
  .superRefine((body, ctx) => {
    // System and developer items alone leave the model nothing to answer.
    if (body.input.length > 0 && body.input.every((item) => item.type === 'message' && ((item as MessageItem).role === 'system' || (item as MessageItem).role === 'developer'))) {
      ctx.addIssue({ code: 'custom', path: ['input'], message: 'At least one user, assistant or function call item is required' });
    }
    // References are resolved (against stored responses) before a request is parsed; one left is unknown.
    body.input.forEach((item, i) => {
      if (item.type === 'item_reference') ctx.addIssue({ code: 'custom', path: ['input', i, 'type'], message: `Unknown item: ${String((item as { id?: unknown }).id ?? 'item_reference')}` });
    });
  });
type ResponsesRequest = z.output<typeof responsesRequestSchema>;
type MessageItem = z.output<typeof messageItem>;

/** A Responses request as the pipeline needs it: the canonical form and the hosted tools withheld from it. */
export interface ParsedResponses {
  canonical: CanonicalRequest;
  /** Types of the hosted tools in `tools` (e.g. `web_search`), which only a native Responses upstream serves. */
  withheldTools: string[];
}

/**
 * Request fields that change the answer and that no translated upstream can honour: fine when the
 * request passes straight through to a native Responses upstream, refused (each named) otherwise.
 */
function untranslatableFields(raw: Record<string, unknown>, issues: ValidationIssue[]): void {
  const refuse = (field: string, what: string) => issues.push({ loc: [field], msg: `${what} is not available for this model; leave ${field} out`, type: 'value_error' });
  if (typeof raw.top_logprobs === 'number' && raw.top_logprobs > 0) refuse('top_logprobs', 'Log probabilities are');
  if (raw.max_tool_calls != null) refuse('max_tool_calls', 'A tool call limit is');
  if (raw.background === true) refuse('background', 'Background responses are');
  if (raw.prompt != null) refuse('prompt', 'Stored prompt templates are');
}

/** Validates a Responses request body (422 with located issues) and translates it to the hub format. */
export function parseResponses(body: unknown): ParsedResponses {
  const request = parseInput(responsesRequestSchema, body);
  const untranslatable: ValidationIssue[] = [];
  untranslatableFields(request as Record<string, unknown>, untranslatable);
  const { tools, withheld, names } = toolsOf(request.tools ?? []);
  const { system, messages } = conversationOf(request.input, names, untranslatable);
  if (request.instructions) system.unshift(request.instructions);
  const format = request.text?.format;
  const effort = request.reasoning?.effort ?? null;
  const summary = request.reasoning?.summary ?? request.reasoning?.generate_summary ?? null;
  return {
    withheldTools: withheld,
    canonical: {
      model: request.model,
      system: system.length ? system.join('\n\n') : null,
      messages,
      tools,
      toolChoice: toolChoiceOf(request.tool_choice, names),
      maxOutputTokens: request.max_output_tokens ?? null,
      temperature: request.temperature ?? null,
      topP: request.top_p ?? null,
      stop: [],
      stream: request.stream ?? false,
      source: 'openai-responses',
      responseFormat: !format
        ? null
        : format.type === 'json_schema'
          ? { type: 'json_schema', name: format.name, description: format.description ?? null, schema: format.schema, strict: format.strict ?? null }
          : { type: format.type },
      reasoning: effort || summary ? { effort, summary } : null,
      thinking: null,
      parallelToolCalls: request.parallel_tool_calls ?? null,
      user: request.safety_identifier ?? request.user ?? null,
      metadata: request.metadata ?? null,
      serviceTier: request.service_tier ?? null,
      topK: null,
      promptCacheKey: request.prompt_cache_key ?? null,
      verbosity: request.text?.verbosity ?? null,
      untranslatable,
    },
  };
}

/** Validates a Responses request body (422 with located issues) and translates it to the hub format. */
export function parseResponsesRequest(body: unknown): CanonicalRequest {
  return parseResponses(body).canonical;
}

// --- Tools -------------------------------------------------------------------------------------

const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** (namespace, name) -> the flat name upstreams know; the key of a call as the client names it. */
type ToolNames = Map<string, string>;
const toolKey = (namespace: string | null | undefined, name: string) => `${namespace ?? ''}\u0000${name}`;

/** A short stable hash, to keep a flattened name unique and within 64 characters. */
function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/**
 * The flat name of a namespaced tool: `<namespace>__<name>` when that is a valid, unused function
 * name; otherwise shortened with a hash of both (stable across turns, as the same tools come back).
 */
function flatName(namespace: string, name: string, taken: Set<string>): string {
  const plain = `${namespace}__${name}`;
  if (FUNCTION_NAME.test(plain) && !taken.has(plain)) return plain;
  const safe = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${safe(namespace).slice(0, 20)}__${safe(name).slice(0, 30)}_${shortHash(`${namespace}\u0000${name}`)}`;
}

/** A custom tool's free-text input as a function's one string parameter, its grammar (if any) described. */
function customParameters(tool: z.output<typeof customTool>): Record<string, unknown> {
  const format = tool.format;
  const grammar = format?.type === 'grammar' && format.definition ? `The input must match this ${format.syntax ?? ''} grammar:\n${format.definition}` : 'Free-form text input.';
  return { type: 'object', properties: { input: { type: 'string', description: grammar } }, required: ['input'], additionalProperties: false };
}

function toolsOf(list: z.output<typeof tool>[]): { tools: CanonicalTool[]; withheld: string[]; names: ToolNames } {
  const tools: CanonicalTool[] = [];
  const withheld = new Set<string>();
  const names: ToolNames = new Map();
  // Plain names first, so a flattened name never takes one a plain tool has.
  const taken = new Set<string>(list.flatMap((t) => (t.type === 'function' || t.type === 'custom' ? [(t as { name: string }).name] : [])));
  const add = (t: z.output<typeof functionTool> | z.output<typeof customTool>, namespace: z.output<typeof namespaceTool> | null) => {
    const name = namespace ? flatName(namespace.name, t.name, taken) : t.name;
    taken.add(name);
    names.set(toolKey(namespace?.name, t.name), name);
    const custom = t.type === 'custom';
    const description = [namespace?.description, t.description].filter((d) => d).join('\n\n') || null;
    tools.push({
      name,
      description,
      parameters: custom ? customParameters(t) : ((t as z.output<typeof functionTool>).parameters ?? { type: 'object', properties: {} }),
      ...(!custom && typeof (t as z.output<typeof functionTool>).strict === 'boolean' ? { strict: (t as z.output<typeof functionTool>).strict! } : {}),
      ...(custom || namespace ? { origin: { name: t.name, namespace: namespace?.name ?? null, custom } } : {}),
    });
  };
  for (const t of list) {
    if (t.type === 'function' || t.type === 'custom') add(t as z.output<typeof functionTool>, null);
    else if (t.type === 'namespace') {
      const group = t as z.output<typeof namespaceTool>;
      for (const member of group.tools) if (member.type === 'function' || member.type === 'custom') add(member as z.output<typeof functionTool>, group);
    } else withheld.add(t.type);
  }
  return { tools, withheld: [...withheld], names };
}

function toolChoiceOf(choice: ResponsesRequest['tool_choice'], names: ToolNames): CanonicalToolChoice | null {
  if (choice === undefined || choice === null) return null;
  if (typeof choice === 'string') return choice;
  const named = (c: Record<string, unknown>) => names.get(toolKey(c.namespace as string | undefined, String(c.name ?? ''))) ?? String(c.name ?? '');
  if ((choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') return { name: named(choice) };
  if (choice.type === 'allowed_tools' && Array.isArray(choice.tools)) {
    const allowed = (choice.tools as Record<string, unknown>[]).filter((t) => t?.type === 'function' || t?.type === 'custom').map(named);
    return { allowed, mode: choice.mode === 'required' ? 'required' : 'auto' };
  }
  return { hosted: choice.type };
}

// --- Input items -------------------------------------------------------------------------------

/** Prefix of the `encrypted_content` we give Anthropic thinking shown to a Responses client (our own, versioned). */
const OPAQUE_PREFIX = 'bk1.';

/**
 * Reasoning opaque data as `encrypted_content`. OpenAI's own passes unchanged; Anthropic's signed or
 * redacted thinking is packed under our prefix, so a Responses client that sends the reasoning item
 * back (Codex does, with `store: false`) gives an Anthropic upstream its signed thinking back.
 */
export function encryptedContentOf(part: ReasoningPart): string | null {
  const opaque = part.opaque;
  if (!opaque) return null;
  if (opaque.family === 'openai') return opaque.encryptedContent;
  const packed = 'signature' in opaque ? { t: part.text, s: opaque.signature } : { r: opaque.redactedData };
  return OPAQUE_PREFIX + Buffer.from(JSON.stringify(packed)).toString('base64url');
}

/** A reasoning item read back: its text, summary and opaque data (ours unpacked, anything else OpenAI's). */
function reasoningPartOf(item: z.output<typeof reasoningItem>): ReasoningPart {
  const summary = (item.summary ?? []).map((s) => s.text);
  let textOut = (item.content ?? []).map((c) => c.text).join('');
  let opaque: ReasoningOpaque | null = null;
  const encrypted = item.encrypted_content;
  if (encrypted?.startsWith(OPAQUE_PREFIX)) {
    try {
      const packed = JSON.parse(Buffer.from(encrypted.slice(OPAQUE_PREFIX.length), 'base64url').toString('utf8')) as { t?: unknown; s?: unknown; r?: unknown };
      if (typeof packed.s === 'string') {
        opaque = { family: 'anthropic', signature: packed.s };
        // The signature covers the thinking text exactly as the model wrote it.
        if (typeof packed.t === 'string') textOut = packed.t;
      } else if (typeof packed.r === 'string') opaque = { family: 'anthropic', redactedData: packed.r };
    } catch {
      // Not ours after all (or damaged): nothing any upstream could verify.
    }
  } else if (encrypted) opaque = { family: 'openai', encryptedContent: encrypted };
  return { type: 'reasoning', text: textOut, summary: opaque?.family === 'anthropic' ? [] : summary, opaque };
}

/** Hosted tool items the client echoes back (`web_search_call`, `mcp_call`, ...): a record of a hosted run, dropped for translated upstreams. */
const isHostedItem = (type: string) => /_call$|_call_output$/.test(type) || type.startsWith('mcp_') || type === 'tool_search_output';

function textOfParts(parts: z.output<typeof toolOutput>, loc: (string | number)[], untranslatable: ValidationIssue[]): { text: string; images: CanonicalImage[] } {
  const images: CanonicalImage[] = [];
  const texts: string[] = [];
  parts.forEach((part, j) => {
    if (part.type === 'input_text' || part.type === 'output_text') texts.push((part as { text: string }).text);
    else if (part.type === 'input_image' && (part as z.output<typeof inputImage>).image_url) images.push({ kind: 'url', url: (part as z.output<typeof inputImage>).image_url! });
    else untranslatable.push({ loc: [...loc, j, 'type'], msg: `${part.type === 'input_image' ? 'Images by file id' : part.type} are not available for this model; send images as image_url`, type: 'value_error' });
  });
  return { text: texts.join(''), images };
}

/**
 * Input items -> system texts and canonical messages. An assistant turn in the Responses format is a
 * run of reasoning, message and call items, so they join one assistant message; consecutive call
 * outputs become one user message of tool results (a user message item after them starts a new
 * one). System and developer items before the conversation are instructions; later ones stay where
 * they are, as system turns.
 */
function conversationOf(items: InputItem[], names: ToolNames, untranslatable: ValidationIssue[]): { system: string[]; messages: CanonicalMessage[] } {
  const system: string[] = [];
  const messages: CanonicalMessage[] = [];
  // The kind of the last item kept, so tool results only merge with tool results.
  let lastKind: string | null = null;
  const assistant = (part: CanonicalPart) => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') last.parts.push(part);
    else messages.push({ role: 'assistant', parts: [part] });
  };
  const toolResult = (part: CanonicalPart) => {
    const last = messages.at(-1);
    if (last?.role === 'user' && lastKind === 'tool_output') last.parts.push(part);
    else messages.push({ role: 'user', parts: [part] });
  };
  items.forEach((item, i) => {
    let kind = item.type;
    switch (item.type) {
      case 'message': {
        const message = item as MessageItem;
        const parts = message.content.flatMap((part, j) => partOf(part, ['input', i, 'content', j], untranslatable));
        if (message.role === 'system' || message.role === 'developer') {
          if (messages.length === 0) system.push(textOf(parts));
          else messages.push({ role: 'system', parts });
        } else if (message.role === 'assistant') parts.forEach(assistant);
        else messages.push({ role: 'user', parts });
        kind = message.role;
        break;
      }
      case 'reasoning':
        assistant(reasoningPartOf(item as z.output<typeof reasoningItem>));
        break;
      case 'function_call': {
        const call = item as z.output<typeof functionCallItem>;
        assistant({ type: 'tool_call', id: call.call_id, name: names.get(toolKey(call.namespace, call.name)) ?? call.name, arguments: call.arguments });
        break;
      }
      case 'custom_tool_call': {
        const call = item as z.output<typeof customToolCallItem>;
        assistant({ type: 'tool_call', id: call.call_id, name: names.get(toolKey(call.namespace, call.name)) ?? call.name, arguments: JSON.stringify({ input: call.input }) });
        break;
      }
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const output = item as z.output<typeof functionCallOutputItem>;
        const { text: content, images } = textOfParts(output.output, ['input', i, 'output'], untranslatable);
        toolResult({ type: 'tool_result', toolCallId: output.call_id, content, isError: false, ...(images.length ? { images } : {}) });
        kind = 'tool_output';
        break;
      }
      default:
        if (!isHostedItem(item.type)) untranslatable.push({ loc: ['input', i, 'type'], msg: `${item.type} items are not available for this model`, type: 'value_error' });
        return;
    }
    lastKind = kind;
  });
  return { system, messages };
}

function partOf(part: ContentPart, loc: (string | number)[], untranslatable: ValidationIssue[]): CanonicalPart[] {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return [{ type: 'text', text: (part as { text: string }).text }];
    case 'refusal':
      return [{ type: 'text', text: (part as z.output<typeof refusalPart>).refusal }];
    case 'input_image': {
      // The image `detail` hint has no canonical counterpart and is dropped.
      const url = (part as z.output<typeof inputImage>).image_url;
      if (url) return [{ type: 'image', image: { kind: 'url', url } }];
      untranslatable.push({ loc: [...loc, 'file_id'], msg: 'Images by file id are not available for this model; send image_url (an https or data: URL)', type: 'value_error' });
      return [];
    }
    default:
      untranslatable.push({ loc: [...loc, 'type'], msg: `${part.type} parts are not available for this model`, type: 'value_error' });
      return [];
  }
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

/** How the client knows a tool the upstream called by its flat name (custom, namespaced), if not as a plain function. */
function originOf(request: CanonicalRequest | undefined, name: string): CanonicalTool['origin'] {
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
const showsSummary = (request: CanonicalRequest | undefined) => Boolean(request?.reasoning?.summary);

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

function outputItem(part: OutputPart, outputIndex: number, who: ResponseIdentity, status: ItemStatus, request: CanonicalRequest | undefined): ResponsesOutputItem {
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
function responseObject(
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
} & StreamBody;

type StreamBody =
  | { kind: 'text'; text: string }
  | { kind: 'tool_call'; id: string; name: string; arguments: string }
  /** `textOpened`: the summary part or reasoning-text part that carries the text was announced. */
  | { kind: 'reasoning'; text: string; opaque: ReasoningOpaque | null; textOpened: boolean };

/**
 * Canonical events -> Responses SSE (`event: <type>` + `data: <json>`, a `sequence_number` on each).
 *
 * Each canonical part becomes one output item, numbered in order of appearance: text a message,
 * reasoning a reasoning item (its text as a summary when the client asked for summaries, else as
 * reasoning text), a tool call a function call, or a custom tool call for a custom tool (its input is
 * sent whole when the call ends: it arrives as JSON arguments, `{"input": ...}`). The `.done` events
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
    private readonly echo: ResponsesEcho = {},
  ) {}

  start(): string {
    const response = this.envelope('in_progress', [], null);
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
          out += this.frame('response.content_part.added', { ...this.ref(item), content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
        }
        // A delta for a finished or mismatched part cannot be placed; drop it rather than corrupt the stream.
        if (item.kind !== 'text' || item.state !== 'open' || event.text === '') return out;
        if (this.held) out += this.release('completed');
        item.text += event.text;
        return out + this.frame('response.output_text.delta', { ...this.ref(item), content_index: 0, delta: event.text, logprobs: [] });
      }
      case 'reasoning_delta':
      case 'reasoning_opaque': {
        let out = '';
        let item = this.byPart.get(event.index);
        if (!item) {
          out += this.release('completed');
          item = this.open(event.index, { kind: 'reasoning', text: '', opaque: null, textOpened: false });
          out += this.frame('response.output_item.added', { output_index: item.outputIndex, item: this.wireItem(item) });
        }
        if (item.kind !== 'reasoning' || item.state !== 'open') return out;
        if (this.held) out += this.release('completed');
        if (event.type === 'reasoning_opaque') {
          item.opaque = event.opaque;
          return out;
        }
        if (event.text === '') return out;
        const summary = showsSummary(this.request);
        if (!item.textOpened) {
          item.textOpened = true;
          out += summary
            ? this.frame('response.reasoning_summary_part.added', { ...this.ref(item), summary_index: 0, part: { type: 'summary_text', text: '' } })
            : this.frame('response.content_part.added', { ...this.ref(item), content_index: 0, part: { type: 'reasoning_text', text: '' } });
        }
        item.text += event.text;
        return (
          out +
          (summary
            ? this.frame('response.reasoning_summary_text.delta', { ...this.ref(item), summary_index: 0, delta: event.text })
            : this.frame('response.reasoning_text.delta', { ...this.ref(item), content_index: 0, delta: event.text }))
        );
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
        // A custom tool's input is sent whole when the call ends (see the class comment).
        if (this.isCustom(item)) return out;
        return out + this.frame('response.function_call_arguments.delta', { ...this.ref(item), delta: event.argumentsDelta });
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
      case 'usage_start':
        return '';
    }
  }

  finish(usage: CanonicalUsage | null): string {
    const out = this.closeAll();
    const incomplete = this.stopReason === 'max_tokens';
    const response = this.envelope(incomplete ? 'incomplete' : 'completed', this.output(), usage ?? this.usage);
    return out + this.frame(incomplete ? 'response.incomplete' : 'response.completed', { response });
  }

  fail(message: string, code: string): string {
    // Items never closed were cut short by the failure.
    for (const item of this.items) if (item.state !== 'closed') item.status = 'incomplete';
    const response = this.envelope('failed', this.output(), this.usage, { code, message });
    return this.frame('response.failed', { response });
  }

  private envelope(status: ResponseStatus, output: ResponsesOutputItem[], usage: CanonicalUsage | null, error: { code: string; message: string } | null = null): ResponsesResponse {
    return responseObject(this.who, status, output, usage, this.request, error, this.echo);
  }

  private open(index: number, body: StreamBody): StreamItem {
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
    const ref = this.ref(item);
    let out = '';
    if (item.kind === 'text') {
      out += this.frame('response.output_text.done', { ...ref, content_index: 0, text: item.text, logprobs: [] });
      out += this.frame('response.content_part.done', { ...ref, content_index: 0, part: { type: 'output_text', text: item.text, annotations: [] } });
    } else if (item.kind === 'reasoning') {
      if (item.textOpened && showsSummary(this.request)) {
        out += this.frame('response.reasoning_summary_text.done', { ...ref, summary_index: 0, text: item.text });
        out += this.frame('response.reasoning_summary_part.done', { ...ref, summary_index: 0, part: { type: 'summary_text', text: item.text } });
      } else if (item.textOpened) {
        out += this.frame('response.reasoning_text.done', { ...ref, content_index: 0, text: item.text });
        out += this.frame('response.content_part.done', { ...ref, content_index: 0, part: { type: 'reasoning_text', text: item.text } });
      }
    } else if (this.isCustom(item)) {
      const input = customInputOf(item.arguments);
      if (input) out += this.frame('response.custom_tool_call_input.delta', { ...ref, delta: input });
      out += this.frame('response.custom_tool_call_input.done', { ...ref, input });
    } else {
      out += this.frame('response.function_call_arguments.done', { ...ref, arguments: item.arguments });
    }
    return out + this.frame('response.output_item.done', { output_index: item.outputIndex, item: this.wireItem(item) });
  }

  private isCustom(item: StreamItem): boolean {
    return item.kind === 'tool_call' && originOf(this.request, item.name)?.custom === true;
  }

  private ref(item: StreamItem): { item_id: string; output_index: number } {
    return { item_id: this.wireItem(item).id, output_index: item.outputIndex };
  }

  private itemId(item: StreamItem): string {
    return this.wireItem(item).id;
  }

  /** The item as the wire shows it now. */
  private wireItem(item: StreamItem): ResponsesOutputItem {
    let part: OutputPart;
    if (item.kind === 'text') part = { type: 'text', text: item.text };
    else if (item.kind === 'reasoning') part = { type: 'reasoning', text: item.text, summary: [], opaque: item.opaque };
    else part = { type: 'tool_call', id: item.id, name: item.name, arguments: item.arguments };
    return outputItem(part, item.outputIndex, this.who, item.status, this.request);
  }

  private output(): ResponsesOutputItem[] {
    return this.items.map((item) => this.wireItem(item));
  }

  private frame(type: string, payload: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...payload })}\n\n`;
  }
}
