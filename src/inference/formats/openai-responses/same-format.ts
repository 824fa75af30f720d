import type { CanonicalUsage, ResponseIdentity } from '../../canonical.js';
import { parseData, record, SameFormatStream } from '../../same-format.js';
import type { SseEvent } from '../../sse.js';
import type { ParsedRequest, SameFormat } from '../client-format.js';

/**
 * Responses from an upstream that serves the Responses API natively: reasoning items, hosted tool
 * calls and every output field are kept; the response is ours (id, model), failures are in our words.
 */

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

export const responsesSameFormat: SameFormat = {
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
