import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type RecordedProbe,
  type RecordedRequest,
  type RouteContext,
  type SimulatorOptions,
  bearerToken,
  readJson,
  sendError,
  sendStatusError,
  sleep,
} from './common.js';
import { handleCountTokens, handleMessages, sendAnthropicError } from './anthropic-messages.js';
import { answerFault, type SimulatorFault } from './faults.js';
import { chatCompletions } from './openai-chat.js';
import { imageGenerations, PNG_1X1 } from './openai-images.js';
import { handleResponses } from './openai-responses.js';
import { PromptCache } from './prompt-cache.js';
import { createVideoJobs, handleVideos, type VideoJobs } from './video-jobs.js';

// Tests and the bench drive the simulator through this module: its shared helpers are theirs too.
export * from './common.js';
export type { SimulatorFault } from './faults.js';
export type { CacheUse, PromptPart } from './prompt-cache.js';
export { PNG_1X1 } from './openai-images.js';

/**
 * A faithful stand-in for the upstreams the gateway talks to, on one HTTP server:
 * - OpenAI-compatible chat completions (`POST /v1/chat/completions`, see openai-chat.ts) as JSON and as SSE (with
 *   `stream_options.include_usage`), usage with cached and reasoning tokens (`reasoning_effort`), tool calls,
 *   structured output (`response_format` json_schema answers JSON valid for the schema), unknown parameters refused (`strictFields`);
 * - OpenAI image generation (`POST /v1/images/generations`, see openai-images.ts);
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

/** What a test switches while the server runs, and what the routes record for it. */
interface SimulatorState {
  down: boolean;
  probeLatency: number;
  fault: SimulatorFault | null;
  /** Responses a `hang` fault holds open: ended when the fault is left, so the server can close. */
  hung: Set<ServerResponse>;
  probes: RecordedProbe[];
  videoJobs: VideoJobs;
}

/** The context every route gets: options, the credential pool with its prompt caches, and the request records. */
function routeContext(options: SimulatorOptions, requests: RecordedRequest[]): RouteContext {
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
  return {
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
}

/** One request: the probe record, then a fault or an outage if one is on, else the route. */
async function handle(req: IncomingMessage, res: ServerResponse, path: string, state: SimulatorState, ctx: RouteContext): Promise<void> {
  const probe = req.method === 'GET' && path === '/v1/models';
  if (probe) {
    state.probes.push({ headers: req.headers, at: Date.now() });
    if (state.probeLatency) await sleep(state.probeLatency);
  }
  const current = state.fault;
  // A connection opened just before `refuse` took effect: dropped like the others.
  if (current?.mode === 'refuse') return void res.socket?.destroy();
  if (current) return answerFault(req, res, path, probe, current, ctx, state.hung);
  if (state.down) {
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
  return handleOpenAi(req, res, path, state, ctx);
}

/** The OpenAI routes: a Bearer key of the pool, then videos or a JSON body for the route. */
async function handleOpenAi(req: IncomingMessage, res: ServerResponse, path: string, state: SimulatorState, ctx: RouteContext): Promise<void> {
  const bearer = bearerToken(req);
  if (bearer === undefined || !ctx.credentials.includes(bearer)) {
    return sendError(res, 401, `Incorrect API key provided ${ctx.detail}`, 'invalid_request_error', 'invalid_api_key');
  }
  if (path === '/v1/videos' || path.startsWith('/v1/videos/')) return handleVideos(req, res, path, ctx, state.videoJobs);
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

/** Listening and not: `refuse` closes the port, and leaving it listens again on the same one. */
function listening(server: Server) {
  return {
    /** Stops accepting connections and drops the open ones (a keep-alive socket would otherwise still reach us). */
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    on: (port: number) =>
      new Promise<void>((resolve, reject) => {
        const failed = (error: Error) => reject(error);
        server.once('error', failed);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', failed);
          resolve();
        });
      }),
  };
}

export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const requests: RecordedRequest[] = [];
  const state: SimulatorState = { down: false, probeLatency: 0, fault: null, hung: new Set(), probes: [], videoJobs: createVideoJobs() };
  const ctx = routeContext(options, requests);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    void handle(req, res, path, state, ctx).catch((error: unknown) => {
      const message = `simulator failure: ${(error as Error).message} ${ctx.detail}`;
      if (res.headersSent || res.destroyed) res.destroy();
      else if (path === '/v1/messages') sendAnthropicError(res, 500, message);
      else sendError(res, 500, message, 'server_error', null);
    });
  });
  const listener = listening(server);
  const endHung = () => {
    for (const res of state.hung) res.destroy();
    state.hung.clear();
  };
  // Fault changes run one after another: a `refuse` cleared before its close finished must still listen again.
  let faultChanges: Promise<void> = Promise.resolve();
  const changeFault = async (next: SimulatorFault | null): Promise<void> => {
    const previous = state.fault;
    state.fault = next;
    if (previous?.mode === 'hang' && next?.mode !== 'hang') endHung();
    if (next?.mode === 'refuse' && previous?.mode !== 'refuse') await listener.stop();
    if (previous?.mode === 'refuse' && next?.mode !== 'refuse') await listener.on(port);
  };

  await listener.on(0);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    requestsFor: (requestId) => requests.filter((r) => r.requestId === requestId),
    probes: state.probes,
    videoJobs: state.videoJobs,
    credentials: ctx.credentials,
    setDown: (value) => {
      state.down = value;
    },
    setProbeLatency: (ms) => {
      state.probeLatency = ms;
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
