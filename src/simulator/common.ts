import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PromptCache } from './prompt-cache.js';
import { schemaInstance } from './schema-instance.js';

/**
 * What every route of the simulator shares: its options and records, the directives read from a
 * prompt, token counting, answer text, pacing, failures and error bodies. The server (openai-simulator.ts)
 * and the routes (openai-chat.ts, openai-images.ts, openai-responses.ts, anthropic-messages.ts, video-jobs.ts)
 * import it; it imports none of them.
 */
export interface SimulatorOptions {
  /** The credential the simulator requires (`Authorization: Bearer`, or `x-api-key` on the Anthropic route). */
  apiKey: string;
  /**
   * More credentials of the same provider account, as a gateway pools several keys of one upstream: any of
   * them authenticates. The pool is `[apiKey, ...apiKeys]` (duplicates dropped); each recorded request says
   * which one it came with (`credential`), and each has its own prompt cache.
   */
  apiKeys?: string[];
  /** Prompts shorter than this many tokens are never cached (default 1024, as OpenAI). */
  cacheMinTokens?: number;
  /** The prompt cache's granularity in tokens (default 128, as OpenAI). */
  cacheBlockTokens?: number;
  /** How long an unused cached prefix lives (default 5 minutes; each hit renews it). */
  cacheTtlMs?: number;
  /** At most this many cached blocks over all credentials (default 100 000); the least recently used go first. */
  cacheMaxEntries?: number;
  /** Text planted in error messages, as real upstreams leak hostnames and account ids. */
  errorDetail?: string;
  /** This instance's name, for the `down=NAME` directive. */
  name?: string;
  /**
   * Refuse unknown request fields as OpenAI and Anthropic themselves do (chat, Responses, Messages).
   * Off by default: many OpenAI-compatible servers ignore what they do not know, and a gateway carries
   * a client's unknown fields to an upstream of the client's own format.
   */
  strictFields?: boolean;
  /**
   * Keep every request in `requests` and every video job for good (the tests read them). Off for a
   * long-running simulator (demo mode): requests are not kept, and video jobs an hour after they began.
   */
  retainRecords?: boolean;
}

export interface RecordedRequest {
  path: string;
  /** The index in `Simulator.credentials` of the key the request authenticated with; -1 when none did (possible only under `fault`). */
  credential: number;
  /** Set when a whole-simulator fault (`setFault`) answered the request instead of its route. */
  fault?: 'hang' | 'status' | 'reset';
  /** The gateway's request id (`x-client-request-id`), the one its client saw as `x-request-id`. */
  requestId: string | undefined;
  headers: IncomingMessage['headers'];
  body: any;
  /** Set when the client went away before the response finished. */
  aborted: boolean;
  startedAt: number;
  endedAt?: number;
}

/** A `GET /v1/models` call (kept apart from `requests`, so status probes never disturb tests of the other routes). */
export interface RecordedProbe {
  headers: IncomingMessage['headers'];
  at: number;
}

/** A value for the schema, or `fallback` without one. */
export const schemaInstanceOr = (schema: unknown, fallback: unknown) => (schema === undefined ? fallback : schemaInstance(schema));

export interface Directives {
  words: number;
  latency: number;
  chunkDelay: number;
  status?: number;
  cutAfter?: number;
  hang: boolean;
  cached: number;
  cacheWrite: number;
  /** The first tool to call (kept for callers of the single-tool form). */
  tool?: string;
  /** Every tool to call, in order: `tool=NAME` and `tools=A,B` both land here. */
  tools: string[];
  textFirst: boolean;
  /** Tool calls get arguments generated from the tool's own schema instead of TOOL_INPUT. */
  schemaArgs: boolean;
  /** With thinking on, a redacted_thinking block follows the thinking block (Anthropic). */
  redactedThinking: boolean;
  noUsage: boolean;
  down?: string;
  reset: boolean;
  badJson: boolean;
  badSse?: 'end' | 'mid';
  only?: string;
}

/** What a route handler needs from the server around it. */
export interface RouteContext {
  options: SimulatorOptions;
  /** `options.errorDetail`, or '' — appended to every error message. */
  detail: string;
  /** The credential pool: `options.apiKey`, then `options.apiKeys`. */
  credentials: readonly string[];
  /**
   * The pool index of the key a request presents (`x-api-key` if it is one of ours, else the Bearer token), -1
   * for none. The routes still check where the key may be sent (the OpenAI routes take only Bearer).
   */
  credentialOf(req: IncomingMessage): number;
  /** The prompt caches of every credential. */
  promptCache: PromptCache;
  /** Records a parsed request and notices when its client goes away. */
  record(req: IncomingMessage, res: ServerResponse, path: string, body: unknown): RecordedRequest;
}

/** The Bearer token of a request, if it has one. */
export function bearerToken(req: IncomingMessage): string | undefined {
  return /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1];
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Word-level token count: close enough to a tokenizer for billing arithmetic, and exactly predictable. */
export function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/**
 * The text of a message content: a string, or the text of its parts. Parts that carry content of their
 * own (Anthropic `tool_result`) count with their inner text; images and other non-text parts count nothing.
 */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      if (!part || typeof part !== 'object') return '';
      if ('text' in part) return String(part.text);
      if ('content' in part) return messageText(part.content);
      return '';
    })
    .join(' ');
}

/** Prompt tokens: every word of every message, plus 3 per message for the role framing. */
export function promptTokensOf(messages: { content?: unknown }[]): number {
  return messages.reduce((sum, m) => sum + countTokens(messageText(m.content)) + 3, 0);
}

export function parseDirectives(messages: { role?: unknown; content?: unknown }[]): Directives {
  // The turn being answered: system/developer messages after it (Claude Code appends its environment as a
  // system message) are instructions, not the turn.
  const turn = messages.findLast((m) => m.role !== 'system' && m.role !== 'developer');
  const last = messageText(turn?.content ?? '');
  const found = /\[sim:([^\]]*)\]/.exec(last)?.[1] ?? '';
  const options = new Map<string, string>();
  for (const part of found.split(/\s+/).filter(Boolean)) {
    const [key, value = 'true'] = part.split('=');
    options.set(key!, value);
  }
  const int = (key: string, fallback: number) => (options.has(key) ? Number(options.get(key)) : fallback);
  const tools = [...(options.get('tool') ? [options.get('tool')!] : []), ...(options.get('tools')?.split(',').filter(Boolean) ?? [])];
  return {
    words: int('words', 8),
    latency: int('latency', 0),
    chunkDelay: int('chunk-delay', 0),
    status: options.has('status') ? Number(options.get('status')) : undefined,
    cutAfter: options.has('cut-after') ? Number(options.get('cut-after')) : undefined,
    hang: options.has('hang'),
    cached: int('cached', 0),
    cacheWrite: int('cache-write', 0),
    tool: tools[0],
    tools,
    textFirst: options.has('text-first'),
    schemaArgs: options.has('schema-args'),
    redactedThinking: options.has('redacted-thinking'),
    noUsage: options.has('no-usage'),
    down: options.get('down'),
    reset: options.has('reset'),
    badJson: options.has('bad-json'),
    badSse: options.has('bad-sse') ? (options.get('bad-sse') === 'mid' ? 'mid' : 'end') : undefined,
    only: options.get('only'),
  };
}

/** The directives as this simulator applies them: under `only=NAME`, another instance drops the failure directives. */
export function forThisSimulator(sim: Directives, ctx: RouteContext): Directives {
  if (sim.only === undefined || sim.only === ctx.options.name) return sim;
  return { ...sim, hang: false, reset: false, status: undefined, cutAfter: undefined, badJson: false, badSse: undefined };
}

/** A truncated body: valid as far as it goes, then cut in the middle of a string (never parseable). */
export function truncatedJson(body: object): string {
  const text = JSON.stringify(body);
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

/** The malformed stream frame of `bad-sse`: a data line whose JSON is cut off, then a line that is not SSE at all. */
export function malformedFrame(detail: string): string {
  return `data: {"id": "broken", "choices": [{"delta": {"content": "${detail}\n\nthis is not a field line ${detail}\n\n`;
}

const WORDS = ['baikal', 'is', 'the', 'deepest', 'lake', 'on', 'earth', 'and', 'holds', 'clear', 'cold', 'water'];

export function answerWords(count: number): string[] {
  return Array.from({ length: count }, (_, i) => WORDS[i % WORDS.length]!);
}

/** Every simulated tool call gets these arguments, so tests can assert them exactly. */
export const TOOL_INPUT = { city: 'Irkutsk', unit: 'celsius' };
/** The text said before tool calls under `text-first`. */
export const TEXT_FIRST = 'Let me check.';

/** Streamed text: the first word bare, then ` word`, as real servers stream tokens with their leading space. */
export function wordDeltas(text: string): string[] {
  return text.split(' ').map((word, i) => (i === 0 ? word : ` ${word}`));
}

/** Streamed tool arguments arrive in small fragments that only parse once reassembled. */
export function jsonFragments(json: string): string[] {
  return json.match(/.{1,8}/g) ?? [];
}

/**
 * A frame writer that hands each frame to the socket before the next, as a real server flushes per token,
 * and waits `chunkDelay` after each. Resolves false once the client is gone.
 */
export function pacedWriter(res: ServerResponse, chunkDelay: number): (frame: string) => Promise<boolean> {
  return async (frame) => {
    if (res.destroyed) return false;
    await new Promise<void>((resolve) => res.write(frame, () => resolve()));
    if (chunkDelay) await sleep(chunkDelay);
    return !res.destroyed;
  };
}

/** A mid-stream cut: no end of stream, no usage; the frames already written reach the client first. */
export async function cutConnection(res: ServerResponse): Promise<void> {
  await sleep(10);
  res.destroy();
}

/**
 * The failure directives every route honours, in this order: hang (never answer), latency, reset, down,
 * status. `fail` answers with an error in the route's own format. Resolves true when the request is dealt with.
 */
export async function simulateFailure(sim: Directives, ctx: RouteContext, outageStatus: number, fail: (status: number, message: string) => void, res?: ServerResponse): Promise<boolean> {
  if (sim.hang) return true; // never answer; the caller's timeout must act
  if (sim.latency) await sleep(sim.latency);
  if (sim.reset && res) {
    // A TCP reset, not a clean close: the caller sees ECONNRESET (or "other side closed") before any header.
    res.socket?.resetAndDestroy();
    return true;
  }
  if (sim.down !== undefined && sim.down === ctx.options.name) {
    fail(outageStatus, `Simulated outage of ${ctx.options.name} ${ctx.detail}`);
    return true;
  }
  if (sim.status) {
    fail(sim.status, `Simulated ${sim.status} from upstream ${ctx.detail}`);
    return true;
  }
  return false;
}

export async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * `retry-after` on an error: `undefined` keeps the simulator's habit (1 second on a 429, none otherwise),
 * `null` sends none, a number sends that many seconds.
 */
export function setRetryAfter(res: ServerResponse, status: number, retryAfterSeconds: number | null | undefined): void {
  const seconds = retryAfterSeconds === undefined ? (status === 429 ? 1 : null) : retryAfterSeconds;
  if (seconds !== null) res.setHeader('retry-after', String(seconds));
}

export function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null, param: string | null = null, retryAfterSeconds?: number | null): void {
  setRetryAfter(res, status, retryAfterSeconds);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, param, code } }));
}

/** OpenAI's error type and code for a simulated status. */
export function sendStatusError(res: ServerResponse, status: number, message: string, retryAfterSeconds?: number | null): void {
  const type = status === 429 ? 'rate_limit_exceeded' : status >= 500 ? 'server_error' : 'invalid_request_error';
  sendError(res, status, message, type, status === 503 ? 'service_unavailable' : type, null, retryAfterSeconds);
}
