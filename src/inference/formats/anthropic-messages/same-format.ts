import { anthropicUsageOf } from '../../providers/anthropic/answer.js';
import type { ResponseIdentity } from '../../canonical.js';
import { parseData, record, SameFormatStream } from '../../same-format.js';
import type { SseEvent } from '../../sse.js';
import type { SameFormat } from '../client-format.js';

/**
 * Messages from an Anthropic upstream: content blocks go out as the upstream made them (thinking and
 * redacted_thinking with their signatures included: an agent's tool loop with thinking on must send
 * them back intact).
 */

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

export const messagesSameFormat: SameFormat = {
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
