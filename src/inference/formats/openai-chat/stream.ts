import type { CanonicalEvent, CanonicalUsage, StreamEncoder } from '../../canonical.js';
import { publicUsageOf, STOP_TO_FINISH, type PublicIdentity } from './answer.js';

/** Canonical events as chat-completion chunks; usage is shown only when the client asked (`include_usage`). */
export class ChatStreamEncoder implements StreamEncoder {
  /** Canonical part index -> position among tool calls (chat numbers tool calls on their own). */
  private readonly toolIndex = new Map<number, number>();
  private finishReason: string | null = null;

  constructor(
    private readonly who: PublicIdentity,
    private readonly includeUsage: boolean,
  ) {}

  private chunk(delta: object, finish: string | null = null): string {
    return `data: ${JSON.stringify({ id: this.who.id, object: 'chat.completion.chunk', created: this.who.created, model: this.who.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  }

  start(): string {
    return this.chunk({ role: 'assistant', content: '' });
  }

  event(event: CanonicalEvent): string {
    switch (event.type) {
      case 'text_delta':
        return this.chunk({ content: event.text });
      case 'reasoning_delta':
        return event.text ? this.chunk({ reasoning_content: event.text }) : '';
      case 'tool_call_start': {
        const index = this.toolIndex.size;
        this.toolIndex.set(event.index, index);
        return this.chunk({ tool_calls: [{ index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }] });
      }
      case 'tool_call_delta':
        return this.chunk({ tool_calls: [{ index: this.toolIndex.get(event.index) ?? 0, function: { arguments: event.argumentsDelta } }] });
      case 'stop':
        this.finishReason = STOP_TO_FINISH[event.reason];
        return this.chunk({}, this.finishReason);
      case 'part_end':
      case 'usage':
      case 'usage_start':
      case 'reasoning_opaque':
        return '';
    }
  }

  finish(usage: CanonicalUsage | null): string {
    let out = this.finishReason === null ? this.chunk({}, 'stop') : '';
    if (this.includeUsage && usage) {
      out += `data: ${JSON.stringify({ id: this.who.id, object: 'chat.completion.chunk', created: this.who.created, model: this.who.model, choices: [], usage: publicUsageOf(usage) })}\n\n`;
    }
    return `${out}data: [DONE]\n\n`;
  }

  fail(message: string, code: string): string {
    return `data: ${JSON.stringify({ error: { message, type: 'server_error', code, param: null } })}\n\n`;
  }
}
