import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Directives,
  type RouteContext,
  TEXT_FIRST,
  TOOL_INPUT,
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
  schemaInstanceOr,
  sendError,
  sendStatusError,
  simulateFailure,
  truncatedJson,
  wordDeltas,
} from './common.js';
import type { PromptPart } from './prompt-cache.js';
import { forcedTool, schemaInPrompt, schemaInstance } from './schema-instance.js';

/**
 * OpenAI-compatible chat completions (`POST /v1/chat/completions`) on the simulator's server, as JSON and as SSE
 * (see openai-simulator.ts for the directives that drive it).
 */

/** The request parameters chat completions documents; anything else is refused as OpenAI does. */
const CHAT_FIELDS = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'n', 'stop', 'presence_penalty',
  'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'response_format', 'seed', 'tools', 'tool_choice', 'parallel_tool_calls', 'user',
  'metadata', 'store', 'service_tier', 'reasoning_effort', 'prediction', 'modalities', 'audio', 'web_search_options', 'verbosity', 'prompt_cache_key',
  'safety_identifier', 'prompt_cache_retention', 'functions', 'function_call',
]);

/** Reasoning tokens a reasoning model spends per `reasoning_effort`. */
const REASONING_TOKENS: Record<string, number> = { none: 0, minimal: 0, low: 16, medium: 32, high: 64, xhigh: 96 };

interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

/**
 * A chat prompt in the order the prompt cache reads it: the leading system/developer messages, the tool
 * definitions, then the other messages (counted as `promptTokensOf` counts them).
 */
function chatPromptParts(messages: { role?: unknown; content?: unknown }[], tools: unknown[]): PromptPart[] {
  const parts: PromptPart[] = messages.map((m) => ({ text: messageText(m.content), framing: 3, tag: String(m.role) }));
  if (!tools.length) return parts;
  const leading = messages.findIndex((m) => m.role !== 'system' && m.role !== 'developer');
  parts.splice(leading < 0 ? parts.length : leading, 0, { opaque: JSON.stringify(tools) });
  return parts;
}

/** The calls the directives ask for (only tools the request offers: an unknown name falls back to text), or the forced one. */
function toolCallsOf(body: any, requestTools: any[], sim: Directives): ToolCall[] {
  const toolCalls = sim.tools
    .filter((name) => requestTools.some((t) => t?.function?.name === name))
    .map((name) => {
      const args = sim.schemaArgs ? schemaInstance(requestTools.find((t) => t?.function?.name === name)?.function?.parameters ?? { type: 'object' }) : TOOL_INPUT;
      return { id: `call_${randomBytes(8).toString('hex')}`, type: 'function', function: { name, arguments: JSON.stringify(args) } };
    });
  // A forced tool is called with arguments valid for its schema, as a model must.
  const forced = toolCalls.length ? undefined : forcedTool(requestTools.map((t) => ({ name: String(t?.function?.name), parameters: t?.function?.parameters })), body.tool_choice);
  if (forced) toolCalls.push({ id: `call_${randomBytes(8).toString('hex')}`, type: 'function', function: { name: forced.name, arguments: JSON.stringify(schemaInstance(forced.parameters ?? { type: 'object' })) } });
  return toolCalls;
}

/** The answer's text: the preamble of calls, JSON for a response format, else words up to the token limit. */
function answerText(body: any, messages: { content?: unknown }[], sim: Directives, toolCalls: ToolCall[], maxTokens: number | undefined): string {
  const format = body.response_format;
  if (toolCalls.length) return sim.textFirst ? TEXT_FIRST : '';
  if (format?.type === 'json_schema') return JSON.stringify(schemaInstance(format.json_schema?.schema));
  if (format?.type === 'json_object') return JSON.stringify(schemaInstanceOr(schemaInPrompt(messages.map((m) => messageText(m.content))), { answer: answerWords(sim.words).join(' ') }));
  return answerWords(Math.min(sim.words, maxTokens ?? Number.POSITIVE_INFINITY)).join(' ');
}

interface ChatAnswer {
  id: string;
  created: number;
  model: string;
  text: string;
  toolCalls: ToolCall[];
  /** Answered in JSON for a response format: streamed as JSON fragments, never cut by the token limit. */
  structured: boolean;
  finishReason: string;
  usage: object;
}

export async function chatCompletions(req: IncomingMessage, res: ServerResponse, body: any, ctx: RouteContext): Promise<void> {
  const unknown = ctx.options.strictFields ? Object.keys(body ?? {}).find((key) => !CHAT_FIELDS.has(key)) : undefined;
  if (unknown) return sendError(res, 400, `Unrecognized request argument supplied: ${unknown} ${ctx.detail}`, 'invalid_request_error', 'unknown_parameter', unknown);
  if (body.reasoning_effort != null && !(body.reasoning_effort in REASONING_TOKENS)) {
    return sendError(res, 400, `Invalid value for 'reasoning_effort': ${JSON.stringify(body.reasoning_effort)} ${ctx.detail}`, 'invalid_request_error', 'invalid_value', 'reasoning_effort');
  }
  const messages: { content?: unknown }[] = Array.isArray(body.messages) ? body.messages : [];
  const sim = forThisSimulator(parseDirectives(messages), ctx);
  if (await simulateFailure(sim, ctx, 503, (status, message) => sendStatusError(res, status, message), res)) return;

  const maxTokens: number | undefined = body.max_completion_tokens ?? body.max_tokens;
  const requestTools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const toolCalls = toolCallsOf(body, requestTools, sim);
  const structured = body.response_format?.type === 'json_schema' || body.response_format?.type === 'json_object';
  const text = answerText(body, messages, sim, toolCalls, maxTokens);
  const reasoningTokens = REASONING_TOKENS[body.reasoning_effort ?? 'none'] ?? 0;
  const promptTokens = promptTokensOf(messages);
  const cache = ctx.promptCache.use(ctx.credentialOf(req), String(body.model), chatPromptParts(messages, requestTools));
  const completionTokens = countTokens(text) + toolCalls.reduce((sum, call) => sum + countTokens(call.function.arguments) + 2, 0) + reasoningTokens;
  const answer: ChatAnswer = {
    id: `chatcmpl-${randomBytes(12).toString('hex')}`,
    created: Math.floor(Date.now() / 1000),
    model: String(body.model),
    text,
    toolCalls,
    structured,
    finishReason: toolCalls.length ? 'tool_calls' : !structured && maxTokens !== undefined && sim.words > maxTokens ? 'length' : 'stop',
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: Math.min(Math.max(sim.cached, cache.cached), promptTokens), audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
  };
  if (!body.stream) return answerJson(res, sim, answer);
  return streamChat(res, sim, ctx, answer, Boolean(body.stream_options?.include_usage));
}

function answerJson(res: ServerResponse, sim: Directives, { id, created, model, text, toolCalls, finishReason, usage }: ChatAnswer): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const serialize = sim.badJson ? truncatedJson : JSON.stringify;
  res.end(
    serialize({
      id,
      object: 'chat.completion',
      created,
      model,
      system_fingerprint: 'fp_sim',
      choices: [
        {
          index: 0,
          message: toolCalls.length ? { role: 'assistant', content: text || null, tool_calls: toolCalls, refusal: null } : { role: 'assistant', content: text, refusal: null },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      ...(sim.noUsage ? {} : { usage }),
    }),
  );
}

/** The SSE stream, with the fault directives (cut-after, bad-sse) applied where a real stream would break. */
async function streamChat(res: ServerResponse, sim: Directives, ctx: RouteContext, answer: ChatAnswer, includeUsage: boolean): Promise<void> {
  const { id, created, model, text, toolCalls, structured, finishReason, usage } = answer;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_sim', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const write = pacedWriter(res, sim.chunkDelay);

  if (!(await write(chunk({ role: 'assistant', content: '', refusal: null })))) return;
  // Text first, then each call: its id and name in its first delta, then its argument fragments, under its own index.
  const pieces: object[] = [
    ...(text ? (structured ? jsonFragments(text) : wordDeltas(text)).map((content) => ({ content })) : []),
    ...toolCalls.flatMap((call, index) => [
      { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] },
      ...jsonFragments(call.function.arguments).map((part) => ({ tool_calls: [{ index, function: { arguments: part } }] })),
    ]),
  ];
  for (let i = 0; i < pieces.length; i++) {
    if (sim.cutAfter !== undefined && i >= sim.cutAfter) return cutConnection(res);
    if (!(await write(chunk(pieces[i]!)))) return;
    if (i === 0 && sim.badSse === 'mid' && !(await write(malformedFrame(ctx.detail)))) return;
  }
  if (sim.badSse === 'end') {
    await write(malformedFrame(ctx.detail));
    return void res.end();
  }
  if (!(await write(chunk({}, finishReason)))) return;
  if (includeUsage && !sim.noUsage) {
    if (!(await write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_sim', choices: [], usage })}\n\n`))) return;
  }
  res.end('data: [DONE]\n\n');
}
