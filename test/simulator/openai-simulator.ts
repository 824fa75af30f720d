import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A faithful stand-in for an OpenAI-compatible upstream: chat completions as JSON and as SSE (with
 * `stream_options.include_usage`), usage with cached tokens, tool calls, and injectable latency, chunk
 * pacing, errors, 429s, hangs and mid-stream cuts.
 *
 * Behaviour is chosen per request by directives in the last message, e.g. `[sim:words=12 chunk-delay=20]`,
 * so tests drive it through the gateway without side channels:
 *   words=N        answer with N words (default 8; capped by max_tokens / max_completion_tokens)
 *   latency=MS     wait before the response headers
 *   chunk-delay=MS wait between stream chunks
 *   status=CODE    answer with that HTTP error (429 adds Retry-After)
 *   cut-after=K    stream K content chunks, then destroy the connection (no usage, no [DONE])
 *   hang           never answer
 *   cached=N       report N prompt tokens as cached
 *   tool=NAME      call function NAME (from the request's tools) instead of answering in text
 *   no-usage       omit usage even when asked for
 *   down=NAME      the simulator started with that `name` answers 503 (to exercise failover)
 */
export interface SimulatorOptions {
  /** The credential the simulator requires (`Authorization: Bearer`). */
  apiKey: string;
  /** Text planted in error messages, as real upstreams leak hostnames and account ids. */
  errorDetail?: string;
  /** This instance's name, for the `down=NAME` directive. */
  name?: string;
}

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** Set when the client went away before the response finished. */
  aborted: boolean;
  startedAt: number;
  endedAt?: number;
}

export interface Simulator {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

interface Directives {
  words: number;
  latency: number;
  chunkDelay: number;
  status?: number;
  cutAfter?: number;
  hang: boolean;
  cached: number;
  tool?: string;
  noUsage: boolean;
  down?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Word-level token count: close enough to a tokenizer for billing arithmetic, and exactly predictable. */
export function countTokens(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part && typeof part === 'object' && 'text' in part ? String(part.text) : '')).join(' ');
  return '';
}

/** Prompt tokens: every word of every message, plus 3 per message for the role framing. */
export function promptTokensOf(messages: { content?: unknown }[]): number {
  return messages.reduce((sum, m) => sum + countTokens(messageText(m.content)) + 3, 0);
}

export function parseDirectives(messages: { content?: unknown }[]): Directives {
  const last = messageText(messages.at(-1)?.content ?? '');
  const found = /\[sim:([^\]]*)\]/.exec(last)?.[1] ?? '';
  const options = new Map<string, string>();
  for (const part of found.split(/\s+/).filter(Boolean)) {
    const [key, value = 'true'] = part.split('=');
    options.set(key!, value);
  }
  const int = (key: string, fallback: number) => (options.has(key) ? Number(options.get(key)) : fallback);
  return {
    words: int('words', 8),
    latency: int('latency', 0),
    chunkDelay: int('chunk-delay', 0),
    status: options.has('status') ? Number(options.get('status')) : undefined,
    cutAfter: options.has('cut-after') ? Number(options.get('cut-after')) : undefined,
    hang: options.has('hang'),
    cached: int('cached', 0),
    tool: options.get('tool'),
    noUsage: options.has('no-usage'),
    down: options.get('down'),
  };
}

const WORDS = ['baikal', 'is', 'the', 'deepest', 'lake', 'on', 'earth', 'and', 'holds', 'clear', 'cold', 'water'];

function answerWords(count: number): string[] {
  return Array.from({ length: count }, (_, i) => WORDS[i % WORDS.length]!);
}

function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null): void {
  if (status === 429) res.setHeader('retry-after', '1');
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const requests: RecordedRequest[] = [];
  const detail = options.errorDetail ?? '';

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, `simulator failure: ${(error as Error).message} ${detail}`, 'server_error', null);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendError(res, 401, `Incorrect API key provided ${detail}`, 'invalid_request_error', 'invalid_api_key');
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return sendError(res, 404, `Unknown route ${path} ${detail}`, 'invalid_request_error', 'unknown_url');
    }
    let body: any;
    try {
      body = await readJson(req);
    } catch {
      return sendError(res, 400, `Invalid JSON body ${detail}`, 'invalid_request_error', null);
    }
    const record: RecordedRequest = { path, headers: req.headers, body, aborted: false, startedAt: Date.now() };
    requests.push(record);
    res.on('close', () => {
      record.endedAt = Date.now();
      if (!res.writableFinished) record.aborted = true;
    });

    const messages: { content?: unknown }[] = Array.isArray(body.messages) ? body.messages : [];
    const sim = parseDirectives(messages);
    if (sim.hang) return; // never answer; the caller's timeout must act
    if (sim.latency) await sleep(sim.latency);
    if (sim.down !== undefined && sim.down === options.name) {
      return sendError(res, 503, `Simulated outage of ${options.name} ${detail}`, 'server_error', 'service_unavailable');
    }
    if (sim.status) {
      const type = sim.status === 429 ? 'rate_limit_exceeded' : sim.status >= 500 ? 'server_error' : 'invalid_request_error';
      return sendError(res, sim.status, `Simulated ${sim.status} from upstream ${detail}`, type, type);
    }

    const maxTokens: number | undefined = body.max_completion_tokens ?? body.max_tokens;
    const words = answerWords(Math.min(sim.words, maxTokens ?? Number.POSITIVE_INFINITY));
    const tool = sim.tool ? (body.tools as any[] | undefined)?.find((t) => t?.function?.name === sim.tool) : undefined;
    const promptTokens = promptTokensOf(messages);
    const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    const model = String(body.model);
    const toolArguments = JSON.stringify({ city: 'Irkutsk', unit: 'celsius' });
    const completionTokens = tool ? countTokens(toolArguments) + 2 : words.length;
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: Math.min(sim.cached, promptTokens), audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    };
    const finishReason = tool ? 'tool_calls' : maxTokens !== undefined && sim.words > maxTokens ? 'length' : 'stop';
    const toolCall = tool ? { id: `call_${randomBytes(8).toString('hex')}`, type: 'function', function: { name: tool.function.name, arguments: toolArguments } } : undefined;

    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model,
          system_fingerprint: 'fp_sim',
          choices: [
            {
              index: 0,
              message: toolCall ? { role: 'assistant', content: null, tool_calls: [toolCall], refusal: null } : { role: 'assistant', content: words.join(' '), refusal: null },
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
    const chunk = (delta: object, finish: string | null = null, extra: object = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_sim', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra })}\n\n`;
    // Each frame is handed to the socket before the next, as a real server flushes per token.
    const write = async (frame: string) => {
      if (res.destroyed) return false;
      await new Promise<void>((resolve) => res.write(frame, () => resolve()));
      if (sim.chunkDelay) await sleep(sim.chunkDelay);
      return !res.destroyed;
    };

    if (!(await write(chunk({ role: 'assistant', content: '', refusal: null })))) return;
    const pieces: object[] = toolCall
      ? [
          { tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.function.name, arguments: '' } }] },
          ...toolArguments.match(/.{1,8}/g)!.map((part) => ({ tool_calls: [{ index: 0, function: { arguments: part } }] })),
        ]
      : words.map((word, i) => ({ content: i === 0 ? word : ` ${word}` }));
    for (let i = 0; i < pieces.length; i++) {
      if (sim.cutAfter !== undefined && i >= sim.cutAfter) {
        await sleep(10); // let the delivered frames reach the client first
        res.destroy(); // a mid-stream cut: no finish, no usage, no [DONE]
        return;
      }
      if (!(await write(chunk(pieces[i]!)))) return;
    }
    if (!(await write(chunk({}, finishReason)))) return;
    if (body.stream_options?.include_usage && !sim.noUsage) {
      if (!(await write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_sim', choices: [], usage })}\n\n`))) return;
    }
    res.end('data: [DONE]\n\n');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
