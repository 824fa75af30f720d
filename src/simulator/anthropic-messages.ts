import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  answerWords,
  countTokens,
  cutConnection,
  forThisSimulator,
  jsonFragments,
  malformedFrame,
  messageText,
  pacedWriter,
  parseDirectives,
  promptTokensOf,
  readJson,
  setRetryAfter,
  simulateFailure,
  TEXT_FIRST,
  truncatedJson,
  TOOL_INPUT,
  wordDeltas,
  type Directives,
  type RouteContext,
} from './common.js';
import type { PromptPart } from './prompt-cache.js';
import { forcedTool, schemaInstance } from './schema-instance.js';

/**
 * The Anthropic Messages API (`POST /v1/messages`) on the simulator's server, driven by the same `[sim:...]`
 * directives in the last message as the OpenAI side (see openai-simulator.ts).
 *
 * Wire details it reproduces: auth by `x-api-key` (or `Authorization: Bearer`, which the 1.x SDKs send),
 * a required `anthropic-version`, errors as `{type:"error",error:{type,message},request_id}`, `input_tokens`
 * excluding cache reads and writes, and the named-event stream message_start → (content_block_start, ping
 * after the first, content_block_delta…, content_block_stop)* → message_delta → message_stop.
 * The fault directives (reset, bad-json, bad-sse, only) act as on the OpenAI side: `bad-sse` sends the
 * malformed frame after the content deltas and ends without message_delta/message_stop; `bad-sse=mid`
 * sends it after the first delta and completes the stream.
 */

/** The published API versions. 2026-10-21 is what @anthropic-ai/sdk 1.x sends by default. */
export const ANTHROPIC_VERSIONS = ['2023-01-01', '2023-06-01', '2026-10-21'];

/** Sampling parameters API version 2026-10-21 removed: sending any of them is a 400, even at default values. */
const REMOVED_IN_2026_10_21 = ['temperature', 'top_p', 'top_k'];

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: object }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

/** The documented top-level fields of a Messages request; anything else is refused as the API does. */
const KNOWN_FIELDS = new Set([
  'model', 'messages', 'max_tokens', 'system', 'metadata', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice',
  'thinking', 'service_tier', 'container', 'mcp_servers', 'context_management', 'output_config', 'output_format', 'inference_geo',
]);

/** What the simulated model thinks before answering when thinking is on. */
export const THINKING_TEXT = 'The user asks about lake baikal; answer briefly.';

/**
 * A thinking block's signature: an HMAC of its text under the simulator's key, so only blocks this
 * simulator issued, unaltered, verify (as Anthropic's signatures do). One key for the whole credential
 * pool: the keys belong to one account, so a conversation may move between them.
 */
function signatureOf(ctx: RouteContext, thinking: string): string {
  return createHmac('sha256', `thinking:${ctx.options.apiKey}`).update(thinking).digest('base64');
}

/**
 * The thinking rules of the real API: every thinking block sent back must carry the signature it was
 * issued with, and with thinking on, an assistant turn that called tools (answered by tool results in
 * the final user turn) must start with its thinking. A gateway that drops or alters thinking fails here.
 */
function thinkingProblem(body: any, ctx: RouteContext): string | undefined {
  const messages: any[] = body.messages;
  for (const [m, message] of messages.entries()) {
    if (message?.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const [c, block] of message.content.entries()) {
      if (block?.type === 'thinking' && block.signature !== signatureOf(ctx, String(block.thinking ?? ''))) return `messages.${m}.content.${c}: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  const on = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
  const lastAssistant = messages.map((message, m) => ({ message, m })).filter(({ message }) => message?.role === 'assistant').at(-1);
  const turn = messages.findLast((message) => message?.role !== 'system');
  const inToolLoop = Array.isArray(turn?.content) && turn.content.some((b: any) => b?.type === 'tool_result');
  if (on && lastAssistant && inToolLoop && Array.isArray(lastAssistant.message.content) && lastAssistant.message.content.some((b: any) => b?.type === 'tool_use')) {
    const first = lastAssistant.message.content[0]?.type;
    if (first !== 'thinking' && first !== 'redacted_thinking') {
      return `messages.${lastAssistant.m}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
    }
  }
  return undefined;
}

const newId = (prefix: string) => `${prefix}${randomBytes(12).toString('hex')}`;

/** Every response carries a `request-id` header, and error bodies repeat it, as Anthropic's do. */
function requestIdOf(res: ServerResponse): string {
  if (!res.hasHeader('request-id')) res.setHeader('request-id', newId('req_'));
  return String(res.getHeader('request-id'));
}

/** `retryAfterSeconds` as `setRetryAfter` reads it (left out: 1 second on a 429). */
export function sendAnthropicError(res: ServerResponse, status: number, message: string, retryAfterSeconds?: number | null): void {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  setRetryAfter(res, status, retryAfterSeconds);
  const requestId = requestIdOf(res);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }));
}

/** The first problem the real API would report about this body, as its `field: problem` message; undefined if none. */
function invalidField(body: any, version: string, strict: boolean): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'body: Input should be an object';
  const unknown = strict ? Object.keys(body).find((key) => !KNOWN_FIELDS.has(key)) : undefined;
  if (unknown) return `${unknown}: Extra inputs are not permitted`;
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (body.max_tokens === undefined) return 'max_tokens: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 0) return 'max_tokens: Input should be a valid non-negative integer';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: Field required (a non-empty list)';
  if (version === '2026-10-21') {
    const removed = REMOVED_IN_2026_10_21.find((param) => param in body);
    if (removed) return `${removed}: Extra inputs are not permitted`;
  }
  for (const [m, message] of body.messages.entries()) {
    if (!Array.isArray(message?.content)) continue;
    for (const [c, block] of message.content.entries()) {
      if (block?.type !== 'image') continue;
      const source = block.source;
      if (source?.type === 'base64' && (!IMAGE_MEDIA_TYPES.includes(source.media_type) || typeof source.data !== 'string' || !source.data)) {
        return `messages.${m}.content.${c}.image.source.base64: media_type should be one of ${IMAGE_MEDIA_TYPES.join(', ')}, with non-empty data`;
      }
      if (source?.type !== 'base64' && !(source?.type === 'url' && typeof source.url === 'string')) {
        return `messages.${m}.content.${c}.image.source: Input tag '${source?.type}' found using 'type' does not match any of the expected tags: 'base64', 'url'`;
      }
    }
  }
  return undefined;
}

/**
 * What every Messages route checks first, as the API does: the key (`x-api-key`, or Bearer as the 1.x SDKs
 * send it), the version header, a JSON body (recorded). Answers the error itself and returns null on failure.
 */
async function acceptRequest(req: IncomingMessage, res: ServerResponse, ctx: RouteContext, path: string): Promise<{ body: any; version: string } | null> {
  const fail = (status: number, message: string) => {
    sendAnthropicError(res, status, message);
    return null;
  };
  requestIdOf(res);
  const apiKey = req.headers['x-api-key'] ?? /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!apiKey) return fail(401, `x-api-key header is required ${ctx.detail}`);
  if (typeof apiKey !== 'string' || !ctx.credentials.includes(apiKey)) return fail(401, `invalid x-api-key ${ctx.detail}`);
  const version = String(req.headers['anthropic-version'] ?? '');
  if (!version) return fail(400, `anthropic-version: header is required ${ctx.detail}`);
  if (!ANTHROPIC_VERSIONS.includes(version)) return fail(400, `anthropic-version: "${version}" is not a valid version ${ctx.detail}`);
  let body: any;
  try {
    body = await readJson(req);
  } catch {
    return fail(400, `There was an error parsing the body of your request as JSON ${ctx.detail}`);
  }
  ctx.record(req, res, path, body);
  return { body, version };
}

/** A Messages prompt in the order Anthropic caches it: tool definitions, system, messages. */
function promptParts(body: any): PromptPart[] {
  const parts: PromptPart[] = [];
  if (Array.isArray(body.tools) && body.tools.length) parts.push({ opaque: JSON.stringify(body.tools) });
  parts.push({ text: messageText(body.system), framing: 0 });
  for (const message of body.messages as { role?: unknown; content?: unknown }[]) parts.push({ text: messageText(message.content), framing: 3, tag: String(message.role) });
  return parts;
}

export async function handleMessages(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  const fail = (status: number, message: string) => sendAnthropicError(res, status, message);
  const accepted = await acceptRequest(req, res, ctx, '/v1/messages');
  if (!accepted) return;
  const { body, version } = accepted;
  const invalid = invalidField(body, version, ctx.options.strictFields === true) ?? thinkingProblem(body, ctx);
  if (invalid) return fail(400, `${invalid} ${ctx.detail}`);

  const sim = forThisSimulator(parseDirectives(body.messages), ctx);
  // An Anthropic outage shows as 529 overloaded_error.
  if (await simulateFailure(sim, ctx, 529, fail, res)) return;

  const answer = answerOf(body, sim, ctx);
  const usage = usageOf(req, body, sim, ctx, outputTokensOf(answer.content));
  const message = { id: newId('msg_'), type: 'message', role: 'assistant', model: body.model, content: answer.content, stop_reason: answer.stopReason, stop_sequence: answer.stopSequence, usage };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(sim.badJson ? truncatedJson(message) : JSON.stringify(message));
  }
  return streamMessage(res, sim, ctx, message, answer.schema !== undefined);
}

interface Answer {
  content: Block[];
  stopReason: string;
  stopSequence: string | null;
  /** The JSON schema the answer follows (`output_config.format` or `output_format`), if any. */
  schema: unknown;
}

/** The tool calls the directives ask for (only tools the request offers: an unknown name falls back to text), or the forced one. */
function toolCalls(body: any, sim: Directives): Block[] {
  const offered = (name: string) => Array.isArray(body.tools) && body.tools.some((t: any) => t?.name === name);
  const schemaOf = (name: string) => body.tools.find((t: any) => t?.name === name)?.input_schema ?? { type: 'object' };
  const calls: Block[] = sim.tools.filter(offered).map((name) => ({ type: 'tool_use', id: newId('toolu_'), name, input: sim.schemaArgs ? (schemaInstance(schemaOf(name)) as object) : TOOL_INPUT }));
  // A forced tool (tool_choice tool/any) is called with input valid for its schema, as the model must.
  const forced = calls.length ? undefined : forcedTool<{ name: string; input_schema: unknown }>(Array.isArray(body.tools) ? body.tools.filter((t: any) => t?.input_schema) : [], body.tool_choice);
  if (forced) calls.push({ type: 'tool_use', id: newId('toolu_'), name: forced.name, input: schemaInstance(forced.input_schema) as object });
  return calls;
}

/** Words up to `max_tokens`, ended where a stop sequence first appears, as the model would. */
function wordsAnswer(body: any, sim: Directives): Omit<Answer, 'schema'> {
  let words = answerWords(Math.min(sim.words, body.max_tokens));
  let stopReason = sim.words > body.max_tokens ? 'max_tokens' : 'end_turn';
  let stopSequence: string | null = null;
  const stops: string[] = Array.isArray(body.stop_sequences) ? body.stop_sequences : [];
  const at = words.findIndex((word) => stops.includes(word));
  if (at >= 0) {
    stopSequence = words[at]!;
    words = words.slice(0, at);
    stopReason = 'stop_sequence';
  }
  return { content: words.length ? [{ type: 'text', text: words.join(' ') }] : [], stopReason, stopSequence };
}

/** The answer's blocks: thinking first when it is on, then tool calls, JSON for a schema, or words. */
function answerOf(body: any, sim: Directives, ctx: RouteContext): Answer {
  const calls = toolCalls(body, sim);
  const thinking: Block[] =
    body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive'
      ? [
          { type: 'thinking', thinking: THINKING_TEXT, signature: signatureOf(ctx, THINKING_TEXT) },
          ...(sim.redactedThinking ? [{ type: 'redacted_thinking' as const, data: randomBytes(32).toString('base64') }] : []),
        ]
      : [];
  const schema = body.output_config?.format?.type === 'json_schema' ? body.output_config.format.schema : body.output_format?.type === 'json_schema' ? body.output_format.schema : undefined;
  const answer: Omit<Answer, 'schema'> = calls.length
    ? { content: sim.textFirst ? [{ type: 'text', text: TEXT_FIRST }, ...calls] : calls, stopReason: 'tool_use', stopSequence: null }
    : schema !== undefined
      ? { content: [{ type: 'text', text: JSON.stringify(schemaInstance(schema)) }], stopReason: 'end_turn', stopSequence: null }
      : wordsAnswer(body, sim);
  return { ...answer, content: [...thinking, ...answer.content], schema };
}

function outputTokensOf(content: Block[]): number {
  return content.reduce(
    (sum, block) =>
      sum + (block.type === 'text' ? countTokens(block.text) : block.type === 'thinking' ? countTokens(block.thinking) : block.type === 'redacted_thinking' ? 8 : countTokens(JSON.stringify(block.input)) + 2),
    0,
  );
}

/** Anthropic's input_tokens excludes what was read from or written to the cache: the three add up to the prompt. */
function usageOf(req: IncomingMessage, body: any, sim: Directives, ctx: RouteContext, outputTokens: number) {
  const promptTokens = countTokens(messageText(body.system)) + promptTokensOf(body.messages);
  const cache = ctx.promptCache.use(ctx.credentialOf(req), body.model, promptParts(body));
  const cacheRead = Math.min(Math.max(sim.cached, cache.cached), promptTokens);
  const cacheWrite = Math.min(Math.max(sim.cacheWrite, cache.written), promptTokens - cacheRead);
  return {
    input_tokens: promptTokens - cacheRead - cacheWrite,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

interface Message {
  content: Block[];
  stop_reason: string;
  stop_sequence: string | null;
  usage: { output_tokens: number };
}

/** A block as content_block_start announces it: empty, its deltas follow. */
function blockStart(block: Block): object {
  if (block.type === 'text') return { type: 'text', text: '' };
  if (block.type === 'thinking') return { type: 'thinking', thinking: '', signature: '' };
  return block.type === 'redacted_thinking' ? block : { ...block, input: {} };
}

function blockDeltas(block: Block, structured: boolean): object[] {
  if (block.type === 'text') return (structured ? jsonFragments(block.text) : wordDeltas(block.text)).map((text) => ({ type: 'text_delta', text }));
  if (block.type === 'thinking') return [...wordDeltas(block.thinking).map((thinking) => ({ type: 'thinking_delta', thinking })), { type: 'signature_delta', signature: block.signature }];
  if (block.type === 'redacted_thinking') return [];
  return jsonFragments(JSON.stringify(block.input)).map((partial_json) => ({ type: 'input_json_delta', partial_json }));
}

/** The named-event stream, with the fault directives (cut-after, bad-sse) applied where a real stream would break. */
async function streamMessage(res: ServerResponse, sim: Directives, ctx: RouteContext, message: Message, structured: boolean): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const write = pacedWriter(res, sim.chunkDelay);
  type Event = { type: string; [field: string]: unknown };
  const frame = (data: Event) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  const send = (data: Event) => write(frame(data));

  // The stream opens with the input side of usage; output_tokens only becomes final in message_delta.
  if (!(await send({ type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } }))) return;
  let deltas = 0;
  for (const [index, block] of message.content.entries()) {
    if (!(await send({ type: 'content_block_start', index, content_block: blockStart(block) }))) return;
    if (index === 0 && !(await send({ type: 'ping' }))) return;
    for (const delta of blockDeltas(block, structured)) {
      if (sim.cutAfter !== undefined && deltas >= sim.cutAfter) return cutConnection(res);
      if (!(await send({ type: 'content_block_delta', index, delta }))) return;
      if (deltas++ === 0 && sim.badSse === 'mid' && !(await write(malformedFrame(ctx.detail)))) return;
    }
    if (!(await send({ type: 'content_block_stop', index }))) return;
  }
  if (sim.badSse === 'end') {
    await write(malformedFrame(ctx.detail));
    return void res.end();
  }
  if (!(await send({ type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }, usage: { output_tokens: message.usage.output_tokens } }))) return;
  res.end(frame({ type: 'message_stop' }));
}

/** `POST /v1/messages/count_tokens`: the prompt's input tokens, counted as a Messages request would be. */
export async function handleCountTokens(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): Promise<void> {
  const accepted = await acceptRequest(req, res, ctx, '/v1/messages/count_tokens');
  if (!accepted) return;
  const { body } = accepted;
  if (typeof body?.model !== 'string' || !Array.isArray(body.messages) || !body.messages.length) return sendAnthropicError(res, 400, `messages: Field required ${ctx.detail}`);
  const tools = Array.isArray(body.tools) ? countTokens(JSON.stringify(body.tools).replace(/[{}[\]",:]/g, ' ')) : 0;
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ input_tokens: countTokens(messageText(body.system)) + promptTokensOf(body.messages) + tools }));
}
