import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type RecordedProbe,
  type RecordedRequest,
  type RouteContext,
  type SimulatorOptions,
  TEXT_FIRST,
  TOOL_INPUT,
  answerWords,
  bearerToken,
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
  schemaInstanceOr,
  sendError,
  sendStatusError,
  simulateFailure,
  sleep,
  truncatedJson,
  wordDeltas,
} from './common.js';
import { handleCountTokens, handleMessages, sendAnthropicError } from './anthropic-messages.js';
import { answerFault, type SimulatorFault } from './faults.js';
import { handleResponses } from './openai-responses.js';
import { PromptCache, type PromptPart } from './prompt-cache.js';
import { forcedTool, schemaInPrompt, schemaInstance } from './schema-instance.js';

import { createVideoJobs, handleVideos, type VideoJobs } from './video-jobs.js';

// Tests and the bench drive the simulator through this module: its shared helpers are theirs too.
export * from './common.js';
export type { SimulatorFault } from './faults.js';
export type { CacheUse, PromptPart } from './prompt-cache.js';

/**
 * A faithful stand-in for the upstreams the gateway talks to, on one HTTP server:
 * - OpenAI-compatible chat completions (`POST /v1/chat/completions`) as JSON and as SSE (with
 *   `stream_options.include_usage`), usage with cached and reasoning tokens (`reasoning_effort`), tool calls,
 *   structured output (`response_format` json_schema answers JSON valid for the schema), unknown parameters refused (`strictFields`);
 * - OpenAI image generation (`POST /v1/images/generations`);
 * - the OpenAI Responses API (`POST /v1/responses`, stateless, see openai-responses.ts);
 * - the Anthropic Messages API (`POST /v1/messages`, see anthropic-messages.ts: thinking blocks with verified
 *   signatures, structured output, stop sequences) and its token counting (`POST /v1/messages/count_tokens`);
 * - an asynchronous video job API (`/v1/videos`, see video-jobs.ts, which lists its own directives);
 * - the model list (`GET /v1/models`, OpenAI's shape, or Anthropic's when asked with `x-api-key`), which
 *   the gateway's status monitor probes;
 * with injectable latency, chunk pacing, errors, 429s, hangs and mid-stream cuts.
 *
 * Credentials and prompt caching, as a provider account has them: `apiKeys` adds keys to `apiKey` (any of
 * them authenticates; `credentials` lists the pool and each recorded request names its `credential`), and
 * each credential has its own prompt cache (prompt-cache.ts): a prompt of at least `cacheMinTokens` tokens
 * (default 1024) is cached in blocks of `cacheBlockTokens` (128) for `cacheTtlMs` (5 minutes, renewed on
 * use), and a later prompt for the same model with the same credential reports its longest cached
 * block-aligned prefix, in JSON and streams alike: chat `usage.prompt_tokens_details.cached_tokens`,
 * Responses `usage.input_tokens_details.cached_tokens`, Anthropic `usage.cache_read_input_tokens`, with
 * what it wrote as `cache_creation_input_tokens`. Another credential of the pool finds nothing cached.
 *
 * Behaviour is chosen per request by directives in the last message (the prompt, for images), e.g.
 * `[sim:words=12 chunk-delay=20]`, so tests drive it through the gateway without side channels:
 *   words=N          answer with N words (default 8; capped by max_tokens / max_completion_tokens)
 *   latency=MS       wait before the response headers
 *   chunk-delay=MS   wait between stream chunks
 *   status=CODE      answer with that HTTP error (429 adds Retry-After)
 *   cut-after=K      stream K content chunks, then destroy the connection (no usage, no [DONE])
 *   hang             never answer
 *   cached=N         report N prompt tokens as read from the cache (or the prompt cache's own count when
 *                    that is larger: the two are not added, so a test's N stays exact on short prompts)
 *   cache-write=N    report N prompt tokens as written to the cache (Anthropic only; OpenAI has no such field;
 *                    again the larger of N and what the prompt cache wrote)
 *   tool=NAME        call tool NAME (from the request's tools) instead of answering in text
 *   tools=A,B        call several tools in one answer, in that order
 *   text-first       with tool/tools: say `Let me check.` before the calls
 *   schema-args      with tool/tools: arguments generated from each tool's schema (an agent's real tools)
 *   redacted-thinking  with thinking on (Anthropic): a redacted_thinking block after the thinking block
 *   no-usage         omit usage even when asked for (OpenAI only: Anthropic always reports usage)
 *   down=NAME        the simulator started with that `name` fails as if down (OpenAI 503, Anthropic 529)
 *   reset            read the request, then reset the connection before any header (ECONNRESET upstream)
 *   bad-json         answer 200 with a JSON body cut off in the middle (not parseable)
 *   bad-sse          stream the content chunks, then a malformed frame (cut-off JSON, a line that is not
 *                    SSE), then end the response cleanly without the end of stream (no usage, no [DONE] /
 *                    message_stop)
 *   bad-sse=mid      the same malformed frame after the first content chunk, then the rest of the stream
 *                    as usual (usage and end of stream included)
 *   only=NAME        the failure directives (hang, reset, status, cut-after, bad-json, bad-sse) apply only
 *                    on the simulator started with that `name`; the others answer normally, e.g.
 *                    `[sim:reset only=primary]` tests failover to a healthy fallback
 * Images honour status, latency, hang, reset, down and only.
 *
 * Outside the requests, a test can take the whole simulator down and back up with `setDown(true|false)`
 * (every route then answers as an outage: OpenAI 503, Anthropic 529), slow the model list with
 * `setProbeLatency(ms)`, and set a fault on every route, the model list included, with `setFault` (see
 * faults.ts: `hang`, `status` with an optional `retry-after`, `reset`, `refuse` the connections; `null`
 * clears it, ends hung requests and listens again on the same port).
 */
export interface Simulator {
  url: string;
  requests: RecordedRequest[];
  /**
   * The calls made for one gateway request (several when it failed over), in order. Tests find their
   * upstream call this way, never as "the last request": status probes, video polls and other tests'
   * stragglers reach the same simulator at any time.
   */
  requestsFor(requestId: string): RecordedRequest[];
  /** Every `GET /v1/models`, answered or not. */
  probes: RecordedProbe[];
  /** While down, every route answers as an outage (OpenAI 503, Anthropic 529). */
  setDown(down: boolean): void;
  /** Delay before `GET /v1/models` answers (default 0). */
  setProbeLatency(ms: number): void;
  /** The credential pool, `apiKey` first: `RecordedRequest.credential` indexes it. */
  credentials: readonly string[];
  /**
   * Sets (or, with null, clears) a fault of every route, the model list included. Resolves once it acts:
   * for `refuse`, once the port is closed; when `refuse` is cleared, once it listens again on the same port.
   * Leaving `hang` destroys the hung requests.
   */
  setFault(fault: SimulatorFault | null): Promise<void>;
  /** The video jobs submitted to `/v1/videos`, and how often each video route was called. */
  videoJobs: VideoJobs;
  close(): Promise<void>;
}

/** The request parameters chat completions documents; anything else is refused as OpenAI does. */
const CHAT_FIELDS = new Set([
  'model', 'messages', 'stream', 'stream_options', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'n', 'stop', 'presence_penalty',
  'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'response_format', 'seed', 'tools', 'tool_choice', 'parallel_tool_calls', 'user',
  'metadata', 'store', 'service_tier', 'reasoning_effort', 'prediction', 'modalities', 'audio', 'web_search_options', 'verbosity', 'prompt_cache_key',
  'safety_identifier', 'prompt_cache_retention', 'functions', 'function_call',
]);

/** Reasoning tokens a reasoning model spends per `reasoning_effort`. */
const REASONING_TOKENS: Record<string, number> = { none: 0, minimal: 0, low: 16, medium: 32, high: 64, xhigh: 96 };

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

async function chatCompletions(req: IncomingMessage, res: ServerResponse, body: any, ctx: RouteContext): Promise<void> {
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
  // Only tools the request offers can be called; a directive naming an unknown tool falls back to text.
  const toolCalls = sim.tools
    .filter((name) => requestTools.some((t) => t?.function?.name === name))
    .map((name) => {
      const args = sim.schemaArgs ? schemaInstance(requestTools.find((t) => t?.function?.name === name)?.function?.parameters ?? { type: 'object' }) : TOOL_INPUT;
      return { id: `call_${randomBytes(8).toString('hex')}`, type: 'function', function: { name, arguments: JSON.stringify(args) } };
    });
  // A forced tool is called with arguments valid for its schema, as a model must.
  const forced = toolCalls.length ? undefined : forcedTool(requestTools.map((t) => ({ name: String(t?.function?.name), parameters: t?.function?.parameters })), body.tool_choice);
  if (forced) toolCalls.push({ id: `call_${randomBytes(8).toString('hex')}`, type: 'function', function: { name: forced.name, arguments: JSON.stringify(schemaInstance(forced.parameters ?? { type: 'object' })) } });
  const format = body.response_format;
  const structured = format?.type === 'json_schema' || format?.type === 'json_object';
  const text = toolCalls.length
    ? sim.textFirst
      ? TEXT_FIRST
      : ''
    : format?.type === 'json_schema'
      ? JSON.stringify(schemaInstance(format.json_schema?.schema))
      : format?.type === 'json_object'
        ? JSON.stringify(schemaInstanceOr(schemaInPrompt(messages.map((m) => messageText(m.content))), { answer: answerWords(sim.words).join(' ') }))
        : answerWords(Math.min(sim.words, maxTokens ?? Number.POSITIVE_INFINITY)).join(' ');
  const reasoningTokens = REASONING_TOKENS[body.reasoning_effort ?? 'none'] ?? 0;
  const promptTokens = promptTokensOf(messages);
  const cache = ctx.promptCache.use(ctx.credentialOf(req), String(body.model), chatPromptParts(messages, requestTools));
  const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
  const created = Math.floor(Date.now() / 1000);
  const model = String(body.model);
  const completionTokens = countTokens(text) + toolCalls.reduce((sum, call) => sum + countTokens(call.function.arguments) + 2, 0) + reasoningTokens;
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: Math.min(Math.max(sim.cached, cache.cached), promptTokens), audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
  const finishReason = toolCalls.length ? 'tool_calls' : !structured && maxTokens !== undefined && sim.words > maxTokens ? 'length' : 'stop';

  if (!body.stream) {
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
    return;
  }

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
  if (body.stream_options?.include_usage && !sim.noUsage) {
    if (!(await write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_sim', choices: [], usage })}\n\n`))) return;
  }
  res.end('data: [DONE]\n\n');
}

/** A valid 1x1 PNG: clients and gateways may decode what they receive. */
export const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** Image output tokens per image by quality, as GPT image models report them for a 1024x1024 image. */
const IMAGE_TOKENS: Record<string, number> = { low: 272, medium: 1056, high: 4160, xhigh: 4160, max: 4160 };

/**
 * OpenAI image generation. Two response families, chosen by model name as OpenAI does:
 * - `dall-e-*` (legacy): `response_format` url (the default) or b64_json, `revised_prompt` for dall-e-3, no usage;
 * - every other model (GPT image models, and the gateway's mapped names): always b64_json, with the
 *   effective background/output_format/quality/size and token usage. Real `gpt-image-*` models reject
 *   `response_format` with 400 unknown_parameter, and so does the simulator for those names.
 */
async function imageGenerations(req: IncomingMessage, res: ServerResponse, body: any, ctx: RouteContext): Promise<void> {
  const model = String(body.model ?? '');
  const prompt: unknown = body.prompt;
  if (typeof prompt !== 'string' || !prompt) {
    return sendError(res, 400, `Missing required parameter: 'prompt'. ${ctx.detail}`, 'invalid_request_error', 'missing_required_parameter', 'prompt');
  }
  const sim = forThisSimulator(parseDirectives([{ content: prompt }]), ctx);
  if (await simulateFailure(sim, ctx, 503, (status, message) => sendStatusError(res, status, message), res)) return;

  const legacy = model.startsWith('dall-e');
  if (/^(gpt-image|chatgpt-image)/.test(model) && body.response_format != null) {
    return sendError(res, 400, `Unknown parameter: 'response_format'. ${ctx.detail}`, 'invalid_request_error', 'unknown_parameter', 'response_format');
  }
  const n = body.n ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > 10) {
    return sendError(res, 400, `Invalid 'n': expected an integer between 1 and 10, got ${JSON.stringify(n)}. ${ctx.detail}`, 'invalid_request_error', 'invalid_value', 'n');
  }
  const format = body.response_format ?? (legacy ? 'url' : 'b64_json');
  const image = () => ({
    ...(format === 'url' ? { url: `http://${req.headers.host}/images/${randomBytes(8).toString('hex')}.png` } : { b64_json: PNG_1X1.toString('base64') }),
    ...(model === 'dall-e-3' ? { revised_prompt: `A detailed rendering of: ${prompt}` } : {}),
  });
  const data = Array.from({ length: n }, image);
  const created = Math.floor(Date.now() / 1000);
  res.writeHead(200, { 'content-type': 'application/json' });
  if (legacy) return void res.end(JSON.stringify({ created, data }));

  const quality = body.quality in IMAGE_TOKENS ? body.quality : 'medium'; // `auto` resolves to what was used
  const inputTokens = countTokens(prompt);
  const outputTokens = IMAGE_TOKENS[quality]! * n;
  res.end(
    JSON.stringify({
      created,
      background: body.background === 'transparent' ? 'transparent' : 'opaque',
      data,
      output_format: body.output_format ?? 'png',
      quality,
      size: !body.size || body.size === 'auto' ? '1024x1024' : body.size,
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { text_tokens: inputTokens, image_tokens: 0 },
        output_tokens: outputTokens,
        total_tokens: inputTokens + outputTokens,
      },
    }),
  );
}

type RouteHandler = (req: IncomingMessage, res: ServerResponse, body: any, ctx: RouteContext) => Promise<void>;
const OPENAI_ROUTES: Record<string, RouteHandler | undefined> = { '/v1/chat/completions': chatCompletions, '/v1/images/generations': imageGenerations, '/v1/responses': handleResponses };

/** What `GET /v1/models` lists. */
export const LISTED_MODELS = ['sim-chat-1', 'sim-image-1', 'sim-messages-1', 'sim-video-1'];

function listModels(req: IncomingMessage, res: ServerResponse, ctx: RouteContext): void {
  const anthropicStyle = req.headers['x-api-key'] !== undefined;
  const apiKey = req.headers['x-api-key'] ?? bearerToken(req);
  if (typeof apiKey !== 'string' || !ctx.credentials.includes(apiKey)) {
    if (anthropicStyle) return sendAnthropicError(res, 401, `invalid x-api-key ${ctx.detail}`);
    return sendError(res, 401, `Incorrect API key provided ${ctx.detail}`, 'invalid_request_error', 'invalid_api_key');
  }
  const created = 1_767_225_600;
  res.writeHead(200, { 'content-type': 'application/json' });
  if (anthropicStyle) {
    const data = LISTED_MODELS.map((id) => ({ type: 'model', id, display_name: id, created_at: new Date(created * 1000).toISOString() }));
    return void res.end(JSON.stringify({ data, has_more: false, first_id: data[0]!.id, last_id: data.at(-1)!.id }));
  }
  res.end(JSON.stringify({ object: 'list', data: LISTED_MODELS.map((id) => ({ id, object: 'model', created, owned_by: 'simulator' })) }));
}

export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const requests: RecordedRequest[] = [];
  const probes: RecordedProbe[] = [];
  let down = false;
  let probeLatency = 0;
  let fault: SimulatorFault | null = null;
  /** Responses a `hang` fault holds open: ended when the fault is left, so the server can close. */
  const hung = new Set<ServerResponse>();
  const videoJobs = createVideoJobs();
  const credentials: readonly string[] = [...new Set([options.apiKey, ...(options.apiKeys ?? [])])];
  const promptCache = new PromptCache({
    minTokens: options.cacheMinTokens ?? 1024,
    blockTokens: options.cacheBlockTokens ?? 128,
    ttlMs: options.cacheTtlMs ?? 5 * 60_000,
    maxEntries: options.cacheMaxEntries ?? 100_000,
  });
  const credentialOf = (req: IncomingMessage): number => {
    const byHeader = req.headers['x-api-key'];
    const index = typeof byHeader === 'string' ? credentials.indexOf(byHeader) : -1;
    const bearer = bearerToken(req);
    return index >= 0 || bearer === undefined ? index : credentials.indexOf(bearer);
  };
  const ctx: RouteContext = {
    options,
    detail: options.errorDetail ?? '',
    credentials,
    credentialOf,
    promptCache,
    record(req, res, path, body) {
      const given = req.headers['x-client-request-id'];
      const record: RecordedRequest = {
        path,
        credential: credentialOf(req),
        requestId: typeof given === 'string' ? given : undefined,
        headers: req.headers,
        body,
        aborted: false,
        startedAt: Date.now(),
      };
      if (options.retainRecords !== false) requests.push(record);
      res.on('close', () => {
        record.endedAt = Date.now();
        if (!res.writableFinished) record.aborted = true;
      });
      return record;
    },
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    void handle(req, res, path).catch((error: unknown) => {
      const message = `simulator failure: ${(error as Error).message} ${ctx.detail}`;
      if (res.headersSent || res.destroyed) res.destroy();
      else if (path === '/v1/messages') sendAnthropicError(res, 500, message);
      else sendError(res, 500, message, 'server_error', null);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const probe = req.method === 'GET' && path === '/v1/models';
    if (probe) {
      probes.push({ headers: req.headers, at: Date.now() });
      if (probeLatency) await sleep(probeLatency);
    }
    const current = fault;
    // A connection opened just before `refuse` took effect: dropped like the others.
    if (current?.mode === 'refuse') return void res.socket?.destroy();
    if (current) return answerFault(req, res, path, probe, current, ctx, hung);
    if (down) {
      const message = `Simulated outage ${ctx.options.name ?? ''} ${ctx.detail}`;
      if (path === '/v1/messages' || (probe && req.headers['x-api-key'] !== undefined)) return sendAnthropicError(res, 529, message);
      return sendStatusError(res, 503, message);
    }
    if (probe) return listModels(req, res, ctx);
    // The Anthropic route has its own auth, versioning and error shape.
    if (req.method === 'POST' && path === '/v1/messages') return handleMessages(req, res, ctx);
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') return handleCountTokens(req, res, ctx);
    // Where legacy `response_format: url` images live; like a signed blob URL, it needs no key.
    if (req.method === 'GET' && path.startsWith('/images/')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      return void res.end(PNG_1X1);
    }

    const bearer = bearerToken(req);
    if (bearer === undefined || !credentials.includes(bearer)) {
      return sendError(res, 401, `Incorrect API key provided ${ctx.detail}`, 'invalid_request_error', 'invalid_api_key');
    }
    if (path === '/v1/videos' || path.startsWith('/v1/videos/')) return handleVideos(req, res, path, ctx, videoJobs);
    const route = req.method === 'POST' ? OPENAI_ROUTES[path] : undefined;
    if (!route) return sendError(res, 404, `Unknown route ${path} ${ctx.detail}`, 'invalid_request_error', 'unknown_url');
    let body: any;
    try {
      body = await readJson(req);
    } catch {
      return sendError(res, 400, `Invalid JSON body ${ctx.detail}`, 'invalid_request_error', null);
    }
    ctx.record(req, res, path, body);
    return route(req, res, body, ctx);
  }

  const endHung = () => {
    for (const res of hung) res.destroy();
    hung.clear();
  };
  /** Stops accepting connections and drops the open ones (a keep-alive socket would otherwise still reach us). */
  const stopListening = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  const listenOn = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => reject(error);
      server.once('error', failed);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', failed);
        resolve();
      });
    });
  // Fault changes run one after another: a `refuse` cleared before its close finished must still listen again.
  let faultChanges: Promise<void> = Promise.resolve();
  const changeFault = async (next: SimulatorFault | null): Promise<void> => {
    const previous = fault;
    fault = next;
    if (previous?.mode === 'hang' && next?.mode !== 'hang') endHung();
    if (next?.mode === 'refuse' && previous?.mode !== 'refuse') await stopListening();
    if (previous?.mode === 'refuse' && next?.mode !== 'refuse') await listenOn(port);
  };

  await listenOn(0);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    requestsFor: (requestId) => requests.filter((r) => r.requestId === requestId),
    probes,
    videoJobs,
    credentials,
    setDown: (value) => {
      down = value;
    },
    setProbeLatency: (ms) => {
      probeLatency = ms;
    },
    setFault: (next) => {
      faultChanges = faultChanges.catch(() => undefined).then(() => changeFault(next));
      return faultChanges;
    },
    close: () =>
      new Promise<void>((resolve) => {
        endHung();
        // Not listening (under `refuse`): the callback still comes, with an error that changes nothing here.
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
