import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  answerWords,
  countTokens,
  cutConnection,
  forThisSimulator,
  jsonFragments,
  messageText,
  pacedWriter,
  parseDirectives,
  sendError,
  schemaInstanceOr,
  sendStatusError,
  simulateFailure,
  TEXT_FIRST,
  TOOL_INPUT,
  truncatedJson,
  wordDeltas,
  type Directives,
  type RouteContext,
} from './common.js';
import type { PromptPart } from './prompt-cache.js';
import { forcedTool, schemaInPrompt, schemaInstance } from './schema-instance.js';

/**
 * The OpenAI Responses API (`POST /v1/responses`) on the simulator's server, for gateway routes that
 * declare native Responses support. Driven by the same `[sim:...]` directives (in the last input item)
 * as the other routes. It keeps NO state, like a provider called with `store: false`: a
 * `previous_response_id` or an `item_reference` is refused, so a gateway must send whole conversations.
 *
 * What it reproduces: string or item input (messages with or without `type`, function calls and their
 * outputs, reasoning items), function tools, the hosted `web_search` tool (a `web_search_call` item),
 * `text.format` (json_schema answers valid JSON for the schema), `reasoning` (a reasoning item first,
 * with a summary when asked and `encrypted_content` when `include` asks for it; reasoning tokens in
 * usage), `max_output_tokens` (status incomplete), unknown parameters refused as OpenAI does (`strictFields`), and the
 * exact stream event sequence with sequence numbers.
 */

/** The request parameters the Responses API documents. */
const KNOWN_FIELDS = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'max_tool_calls', 'temperature', 'top_p',
  'top_logprobs', 'stream', 'stream_options', 'store', 'include', 'metadata', 'previous_response_id', 'conversation', 'reasoning', 'text', 'truncation',
  'user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier', 'background', 'prompt', 'client_metadata',
]);

const EFFORT_TOKENS: Record<string, number> = { none: 0, minimal: 0, low: 16, medium: 32, high: 64, xhigh: 96 };
const REASONING_SUMMARY = 'Considering what is known about lake baikal.';

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** The text of one input item, for directives and token counts. */
function itemText(item: any): string {
  if (typeof item === 'string') return item;
  if (!item || typeof item !== 'object') return '';
  if (item.type === 'function_call') return String(item.arguments ?? '');
  if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') return typeof item.output === 'string' ? item.output : messageText(item.output);
  if (item.type === 'reasoning') return (Array.isArray(item.summary) ? item.summary : []).map((s: any) => String(s?.text ?? '')).join(' ');
  return messageText(item.content);
}

/** A Responses prompt in the order the prompt cache reads it: instructions, tool definitions, input items. */
function promptParts(instructions: string, tools: unknown[], items: any[]): PromptPart[] {
  const parts: PromptPart[] = [{ text: instructions, framing: 0 }];
  if (tools.length) parts.push({ opaque: JSON.stringify(tools) });
  for (const item of items) parts.push({ text: itemText(item), framing: 3, tag: String(item?.role ?? item?.type) });
  return parts;
}

/** What the Responses API refuses before anything else (in its order), or undefined when the request is acceptable. */
function refusal(body: any, items: any[], ctx: RouteContext): { message: string; param: string; code: string | null } | undefined {
  const unknown = ctx.options.strictFields ? Object.keys(body ?? {}).find((key) => !KNOWN_FIELDS.has(key)) : undefined;
  if (unknown) return { message: `Unknown parameter: '${unknown}'.`, param: unknown, code: 'unknown_parameter' };
  if (typeof body.model !== 'string' || !body.model) return { message: "Missing required parameter: 'model'.", param: 'model', code: 'missing_required_parameter' };
  if (body.previous_response_id != null) return { message: `Previous response with id '${body.previous_response_id}' not found.`, param: 'previous_response_id', code: 'previous_response_not_found' };
  if (!items.length) return { message: "Missing required parameter: 'input'.", param: 'input', code: 'missing_required_parameter' };
  const referenced = items.findIndex((item) => item?.type === 'item_reference');
  if (referenced >= 0) return { message: `Item with id '${items[referenced].id}' not found.`, param: `input[${referenced}]`, code: null };
  const effort: string | undefined = body.reasoning?.effort ?? undefined;
  if (effort !== undefined && !(effort in EFFORT_TOKENS)) return { message: `Invalid value: '${effort}'. Supported values are: ${Object.keys(EFFORT_TOKENS).join(', ')}.`, param: 'reasoning.effort', code: 'invalid_value' };
  return undefined;
}

/** The function calls the directives ask for (only tools the request offers), or the forced one, with its schema's arguments. */
function functionCalls(body: any, tools: any[], sim: Directives): any[] {
  const calls = sim.tools
    .filter((name) => tools.some((t) => t?.type === 'function' && t.name === name))
    .map((name) => {
      const args = sim.schemaArgs ? schemaInstance(tools.find((t) => t?.type === 'function' && t.name === name)?.parameters ?? { type: 'object' }) : TOOL_INPUT;
      return { id: newId('fc'), type: 'function_call', status: 'completed', call_id: newId('call'), name, arguments: JSON.stringify(args) };
    });
  // A forced function is called with arguments valid for its schema, as a model must.
  const forced = calls.length ? undefined : forcedTool(tools.filter((t) => t?.type === 'function'), body.tool_choice);
  if (forced) calls.push({ id: newId('fc'), type: 'function_call', status: 'completed', call_id: newId('call'), name: forced.name, arguments: JSON.stringify(schemaInstance(forced.parameters ?? { type: 'object' })) });
  return calls;
}

/** The answer's text: the preamble of calls, JSON for a format, else words up to `max_output_tokens`. */
function answerText(body: any, items: any[], sim: Directives, calls: any[], maxTokens: number | undefined): string {
  const format = body.text?.format;
  if (calls.length) return sim.textFirst ? TEXT_FIRST : '';
  if (format?.type === 'json_schema') return JSON.stringify(schemaInstance(format.schema));
  if (format?.type === 'json_object') return JSON.stringify(schemaInstanceOr(schemaInPrompt([String(body.instructions ?? ''), ...items.map(itemText)]), { answer: answerWords(sim.words).join(' ') }));
  return answerWords(Math.min(sim.words, maxTokens ?? Number.POSITIVE_INFINITY)).join(' ');
}

interface Answer {
  output: any[];
  text: string;
  calls: any[];
  incomplete: boolean;
}

/** Output items in order: reasoning, a hosted web search, then the message and/or function calls. */
function answerOf(body: any, items: any[], sim: Directives, reasoningTokens: number): Answer {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const maxTokens: number | undefined = body.max_output_tokens ?? undefined;
  const include: string[] = Array.isArray(body.include) ? body.include : [];
  const output: any[] = [];
  if (reasoningTokens > 0) {
    output.push({
      id: newId('rs'),
      type: 'reasoning',
      summary: body.reasoning?.summary ? [{ type: 'summary_text', text: REASONING_SUMMARY }] : [],
      ...(include.includes('reasoning.encrypted_content') ? { encrypted_content: `enc_${randomBytes(24).toString('base64url')}` } : {}),
    });
  }
  if (tools.some((t) => t?.type === 'web_search' || t?.type === 'web_search_preview')) {
    output.push({ id: newId('ws'), type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'lake baikal' } });
  }
  const calls = functionCalls(body, tools, sim);
  const text = answerText(body, items, sim, calls, maxTokens);
  const incomplete = !calls.length && !body.text?.format && maxTokens !== undefined && sim.words > maxTokens;
  if (text) output.push({ id: newId('msg'), type: 'message', status: incomplete ? 'incomplete' : 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] });
  output.push(...calls);
  return { output, text, calls, incomplete };
}

/** A response object as the API writes it, in `status`, with `items` as its output. */
function envelope(body: any, id: string, status: string, items: any[], usage: object | null): object {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: null,
    model: body.model,
    output: items,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: body.service_tier ?? 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' }, verbosity: 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools,
    top_logprobs: 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

export async function handleResponses(req: IncomingMessage, res: ServerResponse, body: any, ctx: RouteContext): Promise<void> {
  const items: any[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input : [];
  const refused = refusal(body, items, ctx);
  if (refused) return sendError(res, 400, `${refused.message} ${ctx.detail}`.trim(), 'invalid_request_error', refused.code, refused.param);

  const sim = forThisSimulator(parseDirectives([{ content: itemText(items.at(-1)) }]), ctx);
  if (await simulateFailure(sim, ctx, 503, (status, message) => sendStatusError(res, status, message), res)) return;

  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const effort: string | undefined = body.reasoning?.effort ?? undefined;
  const reasoningTokens = effort ? EFFORT_TOKENS[effort]! : 0;
  const answer = answerOf(body, items, sim, reasoningTokens);

  const inputTokens = countTokens(String(body.instructions ?? '')) + items.reduce((sum, item) => sum + countTokens(itemText(item)) + 3, 0);
  const cache = ctx.promptCache.use(ctx.credentialOf(req), body.model, promptParts(String(body.instructions ?? ''), tools, items));
  const outputTokens = countTokens(answer.text) + answer.calls.reduce((sum, call) => sum + countTokens(call.arguments) + 2, 0) + reasoningTokens;
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: Math.min(Math.max(sim.cached, cache.cached), inputTokens) },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: inputTokens + outputTokens,
  };
  const id = newId('resp');
  const final = () => envelope(body, id, answer.incomplete ? 'incomplete' : 'completed', answer.output, sim.noUsage ? null : usage);

  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(sim.badJson ? truncatedJson(final()) : JSON.stringify(final()));
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const events = responseEvents(res, sim);
  if (!(await events.send('response.created', { response: envelope(body, id, 'in_progress', [], null) }))) return;
  if (!(await events.send('response.in_progress', { response: envelope(body, id, 'in_progress', [], null) }))) return;
  for (const [index, item] of answer.output.entries()) {
    if (!(await streamItem(events, item, index, Boolean(body.text?.format)))) return;
  }
  await events.send(answer.incomplete ? 'response.incomplete' : 'response.completed', { response: final() });
  res.end();
}

interface ResponseEvents {
  /** An event with the next sequence number; false once the client is gone. */
  send(type: string, data: object): Promise<boolean>;
  /** A content delta; false once the stream is cut (`cut-after`) or the client gone. */
  delta(type: string, data: object): Promise<boolean>;
}

function responseEvents(res: ServerResponse, sim: Directives): ResponseEvents {
  const write = pacedWriter(res, sim.chunkDelay);
  let sequence = 0;
  let deltas = 0;
  const send = (type: string, data: object) => write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  return {
    send,
    async delta(type, data) {
      if (sim.cutAfter !== undefined && deltas >= sim.cutAfter) {
        await cutConnection(res);
        return false;
      }
      deltas++;
      return send(type, data);
    },
  };
}

/** One output item's events, from `output_item.added` to `output_item.done`; false once the stream ended early. */
async function streamItem({ send, delta }: ResponseEvents, item: any, index: number, formatted: boolean): Promise<boolean> {
  const ref = { item_id: item.id, output_index: index };
  if (item.type === 'reasoning') {
    if (!(await send('response.output_item.added', { output_index: index, item: { ...item, summary: [] } }))) return false;
    for (const [s, part] of (item.summary as { text: string }[]).entries()) {
      if (!(await send('response.reasoning_summary_part.added', { ...ref, summary_index: s, part: { type: 'summary_text', text: '' } }))) return false;
      for (const piece of wordDeltas(part.text)) if (!(await delta('response.reasoning_summary_text.delta', { ...ref, summary_index: s, delta: piece }))) return false;
      if (!(await send('response.reasoning_summary_text.done', { ...ref, summary_index: s, text: part.text }))) return false;
      if (!(await send('response.reasoning_summary_part.done', { ...ref, summary_index: s, part: { type: 'summary_text', text: part.text } }))) return false;
    }
  } else if (item.type === 'web_search_call') {
    if (!(await send('response.output_item.added', { output_index: index, item: { id: item.id, type: 'web_search_call', status: 'in_progress' } }))) return false;
    for (const phase of ['in_progress', 'searching', 'completed']) if (!(await send(`response.web_search_call.${phase}`, ref))) return false;
  } else if (item.type === 'message') {
    const part = item.content[0];
    if (!(await send('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } }))) return false;
    if (!(await send('response.content_part.added', { ...ref, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } }))) return false;
    const pieces = formatted ? jsonFragments(part.text) : wordDeltas(part.text);
    for (const piece of pieces) if (!(await delta('response.output_text.delta', { ...ref, content_index: 0, delta: piece, logprobs: [] }))) return false;
    if (!(await send('response.output_text.done', { ...ref, content_index: 0, text: part.text, logprobs: [] }))) return false;
    if (!(await send('response.content_part.done', { ...ref, content_index: 0, part }))) return false;
  } else {
    if (!(await send('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } }))) return false;
    for (const piece of jsonFragments(item.arguments)) if (!(await delta('response.function_call_arguments.delta', { ...ref, delta: piece }))) return false;
    if (!(await send('response.function_call_arguments.done', { ...ref, name: item.name, arguments: item.arguments }))) return false;
  }
  return send('response.output_item.done', { output_index: index, item });
}
