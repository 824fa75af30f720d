import type { CanonicalEvent, StreamDecoder } from '../../canonical.js';
import { argumentsOf, mergeCounts, NO_COUNTS, numberOrNull, record, stopReasonOf, usageOfCounts, type UsageCounts } from './answer.js';

/** Blocks that become canonical parts (server-tool blocks have no canonical form). */
const PART_BLOCKS = new Set(['text', 'tool_use', 'thinking', 'redacted_thinking']);

/**
 * An upstream Messages SSE stream as canonical events.
 *
 * Parts: each text, tool_use, thinking or redacted_thinking block becomes the next canonical part
 * (server-tool blocks have no canonical form and are skipped, so part indices stay dense); a thinking
 * block's signature is a `reasoning_opaque` event. Usage: `message_start` reports input and cache
 * counts (also sent on at once as a `usage_start` event), `message_delta` the output count (and some servers repeat or correct the input counts
 * there); they are merged field by field and ONE usage event goes out right after the `stop` event at
 * `message_delta`, so a stream cut before `message_stop` is still billed on the upstream's own count.
 * (Should a server send another `message_delta`, its cumulative counts go out again and supersede.)
 * If no `message_delta` came, the usage known at `message_stop` goes out there.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  /** Upstream block index -> canonical part index, for blocks that have a canonical form. */
  private readonly parts = new Map<number, number>();
  /** Parts started and not yet ended. */
  private readonly open = new Set<number>();
  /** Tool-call parts whose arguments have produced no text yet. */
  private readonly noArguments = new Set<number>();
  private nextPart = 0;
  private counts: UsageCounts = NO_COUNTS;
  private usageSent = false;
  done = false;
  error: string | null = null;

  push(event: { event: string | null; data: string }): CanonicalEvent[] {
    let data: Record<string, unknown>;
    try {
      data = record(JSON.parse(event.data));
    } catch {
      return [];
    }
    // The event name and data.type agree on a well-formed stream; data.type is the one SDKs trust.
    const type = typeof data.type === 'string' ? data.type : event.event;
    switch (type) {
      case 'message_start': {
        this.counts = mergeCounts(this.counts, record(data.message).usage);
        // Input usage known at the start, for clients that show it there (not billed: a `usage` event follows).
        // Nothing is output yet: message_start's output count is a placeholder.
        const usage = usageOfCounts({ ...this.counts, output: 0 });
        return usage ? [{ type: 'usage_start', usage }] : [];
      }
      case 'content_block_start':
        return this.startBlock(numberOrNull(data.index), record(data.content_block));
      case 'content_block_delta':
        return this.delta(numberOrNull(data.index), record(data.delta));
      case 'content_block_stop':
        return this.endPart(this.parts.get(numberOrNull(data.index) ?? -1));
      case 'message_delta': {
        const out: CanonicalEvent[] = [];
        const reason = stopReasonOf(record(data.delta).stop_reason);
        if (reason) out.push({ type: 'stop', reason });
        this.counts = mergeCounts(this.counts, data.usage);
        return [...out, ...this.usageEvent()];
      }
      case 'message_stop': {
        this.done = true;
        const ended = [...this.open].flatMap((part) => this.endPart(part));
        return this.usageSent ? ended : [...ended, ...this.usageEvent()];
      }
      case 'error': {
        const error = record(data.error);
        this.error = typeof error.message === 'string' ? `${String(error.type ?? 'error')}: ${error.message}` : event.data.slice(0, 500);
        return [];
      }
      default:
        // `ping`, and events added to the API after this was written.
        return [];
    }
  }

  private startBlock(index: number | null, block: Record<string, unknown>): CanonicalEvent[] {
    if (index === null || !PART_BLOCKS.has(String(block.type))) return [];
    const part = this.nextPart++;
    this.parts.set(index, part);
    this.open.add(part);
    if (block.type === 'thinking') {
      const out: CanonicalEvent[] = [{ type: 'reasoning_delta', index: part, text: typeof block.thinking === 'string' ? block.thinking : '' }];
      if (typeof block.signature === 'string' && block.signature) out.push({ type: 'reasoning_opaque', index: part, opaque: { family: 'anthropic', signature: block.signature } });
      return out;
    }
    if (block.type === 'redacted_thinking') {
      return [{ type: 'reasoning_opaque', index: part, opaque: { family: 'anthropic', redactedData: typeof block.data === 'string' ? block.data : '' } }];
    }
    if (block.type === 'text') return typeof block.text === 'string' && block.text ? [{ type: 'text_delta', index: part, text: block.text }] : [];
    const out: CanonicalEvent[] = [{ type: 'tool_call_start', index: part, id: String(block.id ?? ''), name: String(block.name ?? '') }];
    // Anthropic starts every tool_use with `input: {}` and streams the input as JSON fragments; a
    // server that sends the whole input up front instead still gets its arguments through.
    const input = record(block.input);
    if (Object.keys(input).length) out.push({ type: 'tool_call_delta', index: part, argumentsDelta: argumentsOf(input) });
    else this.noArguments.add(part);
    return out;
  }

  private delta(index: number | null, delta: Record<string, unknown>): CanonicalEvent[] {
    const part = index === null ? undefined : this.parts.get(index);
    if (part === undefined) return [];
    if (delta.type === 'text_delta' && typeof delta.text === 'string' && delta.text) return [{ type: 'text_delta', index: part, text: delta.text }];
    if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string' && delta.thinking) return [{ type: 'reasoning_delta', index: part, text: delta.thinking }];
    if (delta.type === 'signature_delta' && typeof delta.signature === 'string' && delta.signature) {
      return [{ type: 'reasoning_opaque', index: part, opaque: { family: 'anthropic', signature: delta.signature } }];
    }
    // The first fragment of a tool's input is often empty.
    if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string' && delta.partial_json) {
      this.noArguments.delete(part);
      return [{ type: 'tool_call_delta', index: part, argumentsDelta: delta.partial_json }];
    }
    return [];
  }

  private endPart(part: number | undefined): CanonicalEvent[] {
    if (part === undefined || !this.open.delete(part)) return [];
    // A tool called without arguments streams no input text; its input is `{}`, as in a JSON answer.
    const empty: CanonicalEvent[] = this.noArguments.delete(part) ? [{ type: 'tool_call_delta', index: part, argumentsDelta: '{}' }] : [];
    return [...empty, { type: 'part_end', index: part }];
  }

  private usageEvent(): CanonicalEvent[] {
    const usage = usageOfCounts(this.counts);
    if (!usage) return [];
    this.usageSent = true;
    return [{ type: 'usage', usage }];
  }
}
