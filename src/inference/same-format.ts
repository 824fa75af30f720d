import type { CanonicalUsage, ResponseIdentity } from './canonical.js';
import type { ClientFormatId, ParsedRequest } from './formats/client-format.js';
import { anthropicUsageOf } from './providers/anthropic/answer.js';
import type { SseEvent } from './sse.js';
import { usageOf } from './providers/openai-compatible/chat.js';
import { chatIdentity, deliveredTextOf, publicChunk, publicCompletion } from './formats/openai-chat/answer.js';

/**
 * When the client and the upstream speak the same wire format, the upstream's own answer goes to the
 * client, rewritten only where it must be: our id, the public model id, no upstream error text. What
 * the hub format does not model (chat logprobs, Anthropic thinking blocks with their signatures,
 * Responses reasoning items) survives this way. Each format here is one small rewriter for JSON
 * answers and one for streams; the pipeline runs them in one relay loop.
 */
export interface SameFormat {
  json(body: any, who: ResponseIdentity, parsed: ParsedRequest): RewrittenAnswer;
  stream(who: ResponseIdentity, parsed: ParsedRequest): SameFormatStream;
}

export interface RewrittenAnswer {
  body: object;
  /** Usage the upstream reported; null when it reported none (the pipeline then bills an estimate). */
  usage: CanonicalUsage | null;
  /** The text the answer delivers, for that estimate. */
  deliveredText: string;
}

/** Rewrites an upstream stream event by event (stateful: one per response); the relay's codec for a same-format answer. */
export abstract class SameFormatStream {
  /** Usage the upstream reported as final; null until then. */
  usage: CanonicalUsage | null = null;
  /** True once the upstream said the answer is complete. */
  done = false;
  /** An error the upstream reported in-band, for the operator log only. */
  error: string | null = null;
  /** Text delivered so far, for estimating a cut stream's usage. */
  delivered = '';
  /** The completed response as the client received it, where the format has one (Responses: for the store). */
  finalResponse: Record<string, unknown> | null = null;

  /** Same-format streams open with the upstream's own first event. */
  start(): string {
    return '';
  }

  /** The client's frames for one upstream event ('' to drop it). */
  abstract push(event: SseEvent): string;
  /** Frames that end a complete stream after the upstream's last event (the upstream's own usage stands). */
  abstract finish(): string;
  /** An in-band error that ends the stream (our own words only). */
  abstract fail(message: string, code: string): string;
}

const withReasoning = (usage: Omit<CanonicalUsage, 'reasoningTokens'> | null, reasoningTokens: number | null = null): CanonicalUsage | null =>
  usage ? { ...usage, reasoningTokens } : null;

const record = (value: unknown): Record<string, any> => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, any>) : {});

function parseData(data: string): Record<string, any> | null {
  try {
    const parsed: unknown = JSON.parse(data);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, any>) : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------------
// Chat completions: only documented fields of each choice go out (see publicChunk), usage only when asked.

const chat: SameFormat = {
  json(body, who) {
    const usage = withReasoning(usageOf(body?.usage), body?.usage?.completion_tokens_details?.reasoning_tokens ?? null);
    const deliveredText = (Array.isArray(body?.choices) ? body.choices : []).map((c: any) => `${c?.message?.content ?? ''}${JSON.stringify(c?.message?.tool_calls ?? '')}`).join('');
    return { body: publicCompletion(body, chatIdentity(who), usage), usage, deliveredText };
  },
  stream: (who, parsed) => new ChatStream(chatIdentity(who), parsed),
};

/** A JSON scalar without escapes (a field the rewrite drops, so its exact text never matters). */
const PLAIN_SCALAR = String.raw`(?:null|true|false|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|"[^"\\\u0000-\u001f]*")`;
/** A top-level field publicChunk drops: any but `choices`, `error` (an in-band error) and a non-null `usage`. */
const DROPPED_FIELD = String.raw`(?:"usage":null|"(?!choices"|error"|usage")\w+":${PLAIN_SCALAR})`;
/** A valid JSON string literal (what JSON.parse accepts). */
const STRING_LITERAL = String.raw`"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"`;
/**
 * A plain content chunk, most of any chat stream, in the layout OpenAI-compatible servers write it
 * (compact, `choices` a single text delta, every other field a scalar); its one group is the content as
 * a JSON string literal. Matching it costs a fraction of parsing the chunk, building its public copy
 * and serialising that again, which was the relay's largest cost per stream. Any other chunk (a
 * role, tool calls, a finish reason, usage, an error, logprobs, whitespace, nested extras) is parsed.
 */
const PLAIN_CONTENT_CHUNK = new RegExp(
  String.raw`^\{(?:${DROPPED_FIELD},)*"choices":\[\{"index":0,"delta":\{"content":(${STRING_LITERAL})\},"logprobs":null,"finish_reason":null\}\](?:,${DROPPED_FIELD})*\}$`,
);

/** The content literal of a plain content chunk (see PLAIN_CONTENT_CHUNK), or null when the chunk must be parsed. */
export function plainContentOf(data: string): string | null {
  return PLAIN_CONTENT_CHUNK.exec(data)?.[1] ?? null;
}

class ChatStream extends SameFormatStream {
  /**
   * A plain content chunk's frame before and after its content literal, cut once per stream from
   * publicChunk's own output for such a chunk, so the plain path cannot drift from the parsed one.
   */
  private readonly plainFrame: [string, string];

  constructor(
    private readonly who: ResponseIdentity,
    private readonly parsed: ParsedRequest,
  ) {
    super();
    const frame = `data: ${JSON.stringify(publicChunk({ choices: [{ index: 0, delta: { content: '' }, logprobs: null, finish_reason: null }] }, who, null))}\n\n`;
    const at = frame.indexOf('"content":""') + '"content":'.length;
    this.plainFrame = [frame.slice(0, at), frame.slice(at + '""'.length)];
  }

  push(event: SseEvent): string {
    if (event.data === '[DONE]') {
      this.done = true;
      return '';
    }
    const content = plainContentOf(event.data);
    if (content !== null) {
      this.delivered += content.includes('\\') ? (JSON.parse(content) as string) : content.slice(1, -1);
      return `${this.plainFrame[0]}${content}${this.plainFrame[1]}`;
    }
    const chunk = parseData(event.data);
    if (!chunk) return '';
    if (chunk.error) {
      this.error = event.data.slice(0, 500);
      return '';
    }
    const reported = usageOf(chunk.usage);
    if (reported) this.usage = withReasoning(reported, chunk.usage?.completion_tokens_details?.reasoning_tokens ?? null);
    this.delivered += deliveredTextOf(chunk);
    const usageOnly = Array.isArray(chunk.choices) && chunk.choices.length === 0;
    if (usageOnly && !this.parsed.streamUsage) return '';
    return `data: ${JSON.stringify(publicChunk(chunk, this.who, this.parsed.streamUsage ? reported : null))}\n\n`;
  }

  finish(): string {
    return 'data: [DONE]\n\n';
  }

  fail(message: string, code: string): string {
    return `data: ${JSON.stringify({ error: { message, type: 'server_error', code, param: null } })}\n\n`;
  }
}

// ---------------------------------------------------------------------------------------------------
// Anthropic Messages: content blocks go out as the upstream made them (thinking and redacted_thinking
// with their signatures included: an agent's tool loop with thinking on must send them back intact).

/** The documented top-level fields of a Messages `message`. */
const MESSAGE_FIELDS = ['type', 'role', 'content', 'stop_reason', 'stop_sequence', 'usage', 'container', 'context_management'];

function publicMessage(message: Record<string, any>, who: ResponseIdentity): Record<string, unknown> {
  const out: Record<string, unknown> = { id: `msg_${who.id}`, type: 'message', role: 'assistant', model: who.model };
  for (const field of MESSAGE_FIELDS) if (field in message) out[field] = message[field];
  out.id = `msg_${who.id}`;
  out.model = who.model;
  return out;
}

/** The text a Messages content block or delta carries, for estimates. */
function messagesText(block: Record<string, any>): string {
  return String(block.text ?? block.partial_json ?? block.thinking ?? (block.type === 'tool_use' ? JSON.stringify(block.input ?? {}) : ''));
}

const anthropicFrame = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

const anthropicMessages: SameFormat = {
  json(body, who) {
    const message = record(body);
    const content: Record<string, any>[] = Array.isArray(message.content) ? message.content.map(record) : [];
    return { body: publicMessage(message, who), usage: anthropicUsageOf(message.usage), deliveredText: content.map(messagesText).join('') };
  },
  stream: (who) => new MessagesStream(who),
};

class MessagesStream extends SameFormatStream {
  /** Anthropic's counts are cumulative: a later event's non-null count replaces an earlier one. */
  private counts: Record<string, unknown> = {};

  constructor(private readonly who: ResponseIdentity) {
    super();
  }

  push(event: SseEvent): string {
    const data = parseData(event.data);
    if (!data) return '';
    const type = typeof data.type === 'string' ? data.type : event.event;
    switch (type) {
      case 'message_start': {
        const message = record(data.message);
        this.merge(message.usage);
        // Nothing is output yet: Anthropic's placeholder output count (1) would be added to the final count by
        // clients that sum a stream's usage events (LangChain), and the SDK takes the final count from message_delta.
        const usage = message.usage && typeof message.usage === 'object' ? { ...message.usage, output_tokens: 0 } : message.usage;
        return anthropicFrame('message_start', { ...data, type: 'message_start', message: publicMessage({ ...message, usage }, this.who) });
      }
      case 'content_block_start':
        this.delivered += messagesText(record(data.content_block));
        break;
      case 'content_block_delta':
        this.delivered += messagesText(record(data.delta));
        break;
      case 'message_delta':
        // message_start's output count is a placeholder: only message_delta makes the counts the answer's
        // usage (a stream cut before it is billed on an estimate of what was delivered).
        this.merge(data.usage);
        this.usage = anthropicUsageOf(this.counts);
        break;
      case 'message_stop':
        this.done = true;
        break;
      case 'error': {
        const upstreamError = record(data.error);
        this.error = `${String(upstreamError.type ?? 'error')}: ${String(upstreamError.message ?? event.data.slice(0, 500))}`;
        return '';
      }
    }
    // Everything else (blocks, deltas, pings, events added to the API later) goes out as sent.
    return `event: ${type}\ndata: ${event.data}\n\n`;
  }

  finish(): string {
    return '';
  }

  fail(message: string): string {
    // Like Anthropic's own, the error event ends the stream as is.
    return anthropicFrame('error', { type: 'error', error: { type: 'api_error', message } });
  }

  private merge(raw: unknown): void {
    for (const [key, value] of Object.entries(record(raw))) if (value !== null && value !== undefined) this.counts[key] = value;
  }
}

// ---------------------------------------------------------------------------------------------------
// OpenAI Responses, from an upstream that serves the Responses API natively: reasoning items, hosted
// tool calls and every output field are kept; the response is ours (id, model), failures are in our words.

/** Canonical usage from a Responses usage object. */
export function responsesUsageOf(raw: unknown): CanonicalUsage | null {
  const u = record(raw);
  if (typeof u.input_tokens !== 'number' || typeof u.output_tokens !== 'number') return null;
  const cached = u.input_tokens_details?.cached_tokens;
  const written = u.input_tokens_details?.cache_write_tokens;
  const reasoning = u.output_tokens_details?.reasoning_tokens;
  return {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadTokens: typeof cached === 'number' ? cached : null,
    cacheWriteTokens: typeof written === 'number' ? written : null,
    reasoningTokens: typeof reasoning === 'number' ? reasoning : null,
  };
}

/**
 * The response object as the client sees it: our id and public model, the stored response it continues
 * (the upstream was sent the whole conversation instead); an upstream error's text never.
 */
function publicResponse(response: Record<string, any>, who: ResponseIdentity, parsed: ParsedRequest): Record<string, any> {
  const previous = typeof parsed.raw.previous_response_id === 'string' ? parsed.raw.previous_response_id : null;
  return {
    ...response,
    id: `resp_${who.id}`,
    model: who.model,
    previous_response_id: previous,
    ...(response.error ? { error: { code: 'upstream_error', message: 'The model route failed' } } : {}),
  };
}

function responsesText(items: unknown): string {
  return (Array.isArray(items) ? items : [])
    .map((item) => {
      const it = record(item);
      if (it.type === 'message') return (Array.isArray(it.content) ? it.content : []).map((p: any) => String(p?.text ?? '')).join('');
      if (it.type === 'reasoning') return (Array.isArray(it.summary) ? it.summary : []).map((p: any) => String(p?.text ?? '')).join('');
      return String(it.arguments ?? it.input ?? '');
    })
    .join('');
}

/** Stream events that carry the whole response object. */
const RESPONSE_EVENTS = new Set(['response.created', 'response.in_progress', 'response.queued', 'response.completed', 'response.incomplete']);

export const openAiResponses: SameFormat = {
  json(body, who, parsed) {
    const response = record(body);
    return { body: publicResponse(response, who, parsed), usage: responsesUsageOf(response.usage), deliveredText: responsesText(response.output) };
  },
  stream: (who, parsed) => new ResponsesStream(who, parsed),
};

class ResponsesStream extends SameFormatStream {
  /** The next sequence number, for a failure event of ours after the upstream's events. */
  private sequence = 0;

  constructor(
    private readonly who: ResponseIdentity,
    private readonly parsed: ParsedRequest,
  ) {
    super();
  }

  push(event: SseEvent): string {
    const data = parseData(event.data);
    if (!data) return '';
    const type = String(data.type ?? event.event ?? '');
    if (typeof data.sequence_number === 'number') this.sequence = data.sequence_number + 1;
    if (type === 'response.failed' || type === 'error') {
      this.error = event.data.slice(0, 500);
      return '';
    }
    if (type.endsWith('.delta') && typeof data.delta === 'string') this.delivered += data.delta;
    if (!RESPONSE_EVENTS.has(type)) return `event: ${type}\ndata: ${event.data}\n\n`;
    const response = publicResponse(record(data.response), this.who, this.parsed);
    if (type === 'response.completed' || type === 'response.incomplete') {
      this.done = true;
      this.usage = responsesUsageOf(response.usage);
      this.finalResponse = response;
    }
    return `event: ${type}\ndata: ${JSON.stringify({ ...data, response })}\n\n`;
  }

  finish(): string {
    return '';
  }

  fail(message: string, code: string): string {
    const response = { id: `resp_${this.who.id}`, object: 'response', created_at: this.who.created, model: this.who.model, status: 'failed', error: { code, message }, output: [] };
    return `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: this.sequence++, response })}\n\n`;
  }
}

/** The same-format rewriter for a client format, when its upstream speaks that format too. */
export const SAME_FORMAT: Record<ClientFormatId, SameFormat> = {
  'openai-chat': chat,
  'anthropic-messages': anthropicMessages,
  'openai-responses': openAiResponses,
};
