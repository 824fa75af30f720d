import type { CanonicalEvent, CanonicalRequest, CanonicalUsage, ResponseIdentity, StopReason, StreamEncoder } from '../../canonical.js';
import { messageId, messagesUsage, showsThinking, STOP_TO_ANTHROPIC } from './answer.js';

function frame(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/**
 * Canonical events as a Messages SSE stream.
 *
 * `message_start` is held back until the first canonical event, so that input usage an upstream
 * reports at the start (a `usage_start` event, from an Anthropic upstream) goes out in it as
 * Anthropic's own streams do; `start()` therefore returns nothing. Otherwise it carries zeros (and
 * null cache buckets), and either way the final `message_delta` carries the full billed usage: input,
 * output and both cache buckets, cumulative. The SDK's accumulator overwrites each non-null field
 * from `message_delta`, so `finalMessage().usage` is the billed usage. (LangChain reads input only
 * from `message_start` and output from `message_delta`: its streamed input count is right only when
 * the upstream reported input at the start.)
 *
 * Blocks: Anthropic streams one content block at a time with indices 0, 1, 2… in order, and SDKs
 * rely on that. A block opens at its part's first event (so a part that never produces text never
 * becomes an empty block) and closes at `part_end`, when the next part opens (some upstreams only
 * say parts ended at the very end), or at `finish`. Text arriving for a part already closed opens a
 * new text block; arguments arriving for a closed tool call still go out under its block index
 * (SDKs accumulate by index), so nothing the model produced is dropped. Reasoning becomes thinking
 * blocks (with their signature as a `signature_delta`) when the client turned thinking on.
 */
export class MessagesStreamEncoder implements StreamEncoder {
  private nextBlock = 0;
  /** The block being streamed, if any, and the canonical part it renders. */
  private open: { part: number; block: number; kind: 'text' | 'tool_use' | 'thinking' | 'redacted_thinking' } | null = null;
  /** Canonical tool-call part -> its block index (a late argument delta needs it after the block closed). */
  private readonly toolBlocks = new Map<number, number>();
  private stopReason: StopReason | null = null;
  private started = false;

  constructor(
    private readonly who: ResponseIdentity,
    private readonly request?: CanonicalRequest,
  ) {}

  start(): string {
    return '';
  }

  /** `message_start` (once), with the input usage known so far. */
  private messageStart(usage: CanonicalUsage | null): string {
    if (this.started) return '';
    this.started = true;
    const message = {
      id: messageId(this.who),
      type: 'message',
      role: 'assistant',
      model: this.who.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // Nothing is output yet (clients that sum a stream's usage events, like LangChain, add this to the final count).
      usage: usage ? { ...messagesUsage(usage), output_tokens: 0 } : { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null },
    };
    return frame('message_start', { message }) + frame('ping', {});
  }

  event(event: CanonicalEvent): string {
    if (event.type === 'usage_start') return this.messageStart(event.usage);
    return this.messageStart(null) + this.body(event);
  }

  private body(event: CanonicalEvent): string {
    switch (event.type) {
      case 'text_delta': {
        if (!event.text) return '';
        const opening = this.open?.part === event.index ? '' : this.openBlock(event.index, 'text', { type: 'text', text: '' });
        return opening + frame('content_block_delta', { index: this.open!.block, delta: { type: 'text_delta', text: event.text } });
      }
      case 'reasoning_delta': {
        if (!event.text || !showsThinking(this.request)) return '';
        const opening = this.open?.part === event.index ? '' : this.openBlock(event.index, 'thinking', { type: 'thinking', thinking: '', signature: '' });
        if (this.open!.kind !== 'thinking') return opening;
        return opening + frame('content_block_delta', { index: this.open!.block, delta: { type: 'thinking_delta', thinking: event.text } });
      }
      case 'reasoning_opaque': {
        const opaque = event.opaque;
        if (!showsThinking(this.request) || opaque.family !== 'anthropic') return '';
        if ('redactedData' in opaque) return this.open?.part === event.index ? '' : this.openBlock(event.index, 'redacted_thinking', { type: 'redacted_thinking', data: opaque.redactedData });
        const opening = this.open?.part === event.index ? '' : this.openBlock(event.index, 'thinking', { type: 'thinking', thinking: '', signature: '' });
        if (this.open!.kind !== 'thinking') return opening;
        return opening + frame('content_block_delta', { index: this.open!.block, delta: { type: 'signature_delta', signature: opaque.signature } });
      }
      case 'tool_call_start': {
        const opening = this.openBlock(event.index, 'tool_use', { type: 'tool_use', id: event.id, name: event.name, input: {} });
        this.toolBlocks.set(event.index, this.open!.block);
        return opening;
      }
      case 'tool_call_delta': {
        const block = this.toolBlocks.get(event.index);
        // A delta for a call that never started has no id or name to open a block with.
        if (block === undefined || !event.argumentsDelta) return '';
        return frame('content_block_delta', { index: block, delta: { type: 'input_json_delta', partial_json: event.argumentsDelta } });
      }
      case 'part_end':
        return this.open?.part === event.index ? this.closeOpen() : '';
      case 'stop':
        this.stopReason = event.reason;
        return '';
      case 'usage':
      case 'usage_start':
        // `finish` receives the usage that was billed, which is what the client is shown.
        return '';
    }
  }

  finish(usage: CanonicalUsage | null): string {
    const delta = { stop_reason: STOP_TO_ANTHROPIC[this.stopReason ?? 'end'], stop_sequence: null };
    // Without reported usage there is nothing honest to say about input; output_tokens is required.
    const shown = usage ? messagesUsage(usage) : { input_tokens: null, output_tokens: 0, cache_creation_input_tokens: null, cache_read_input_tokens: null };
    return this.messageStart(null) + this.closeOpen() + frame('message_delta', { delta, usage: shown }) + frame('message_stop', {});
  }

  fail(message: string, _code: string): string {
    // Mid-stream failures are always ours or the route's (never the client's request): `api_error`.
    // Like Anthropic's own, the error event ends the stream as is: no block stop, no message_stop.
    return frame('error', { error: { type: 'api_error', message } });
  }

  private openBlock(part: number, kind: 'text' | 'tool_use' | 'thinking' | 'redacted_thinking', contentBlock: object): string {
    const closing = this.closeOpen();
    this.open = { part, block: this.nextBlock++, kind };
    return closing + frame('content_block_start', { index: this.open.block, content_block: contentBlock });
  }

  private closeOpen(): string {
    if (!this.open) return '';
    const index = this.open.block;
    this.open = null;
    return frame('content_block_stop', { index });
  }
}
