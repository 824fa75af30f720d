import type { CanonicalEvent, CanonicalRequest, CanonicalUsage, OutputPart, ReasoningOpaque, ResponseIdentity, StopReason, StreamEncoder } from '../../canonical.js';
import {
  customInputOf,
  lastItemStatus,
  originOf,
  outputItem,
  responseObject,
  showsSummary,
  type ItemStatus,
  type ResponsesEcho,
  type ResponsesMessageItem,
  type ResponsesOutputItem,
  type ResponsesResponse,
  type ResponseStatus,
} from './answer.js';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One output item being streamed. `state` is `open` while deltas may arrive, `ended` once the part
 * ended but its `.done` events are held back, `closed` once they were sent.
 */
type StreamItem = {
  outputIndex: number;
  state: 'open' | 'ended' | 'closed';
  status: ItemStatus;
} & StreamBody;

type StreamBody =
  | { kind: 'text'; text: string }
  | { kind: 'tool_call'; id: string; name: string; arguments: string }
  /** `textOpened`: the summary part or reasoning-text part that carries the text was announced. */
  | { kind: 'reasoning'; text: string; opaque: ReasoningOpaque | null; textOpened: boolean };

/**
 * Canonical events -> Responses SSE (`event: <type>` + `data: <json>`, a `sequence_number` on each).
 *
 * Each canonical part becomes one output item, numbered in order of appearance: text a message,
 * reasoning a reasoning item (its text as a summary when the client asked for summaries, else as
 * reasoning text), a tool call a function call, or a custom tool call for a custom tool (its input is
 * sent whole when the call ends: it arrives as JSON arguments, `{"input": ...}`). The `.done` events
 * of an ended part are held until the next output event or the stop: only then is it known whether
 * the part was the one the token limit cut short, whose item the Responses format marks
 * `incomplete`. Parts an upstream never ended are closed at the stop or in `finish`.
 */
export class ResponsesStreamEncoder implements StreamEncoder {
  private sequence = 0;
  private readonly items: StreamItem[] = [];
  private readonly byPart = new Map<number, StreamItem>();
  /** An ended part whose `.done` events are still held back. */
  private held: StreamItem | null = null;
  private stopReason: StopReason | null = null;
  private usage: CanonicalUsage | null = null;

  constructor(
    private readonly who: ResponseIdentity,
    private readonly request?: CanonicalRequest,
    private readonly echo: ResponsesEcho = {},
  ) {}

  start(): string {
    const response = this.envelope('in_progress', [], null);
    return this.frame('response.created', { response }) + this.frame('response.in_progress', { response });
  }

  event(event: CanonicalEvent): string {
    switch (event.type) {
      case 'text_delta':
        return this.text(event);
      case 'reasoning_delta':
      case 'reasoning_opaque':
        return this.reasoning(event);
      case 'tool_call_start': {
        if (this.byPart.has(event.index)) return '';
        const out = this.release('completed');
        const item = this.open(event.index, { kind: 'tool_call', id: event.id, name: event.name, arguments: '' });
        return out + this.frame('response.output_item.added', { output_index: item.outputIndex, item: this.wireItem(item) });
      }
      case 'tool_call_delta':
        return this.toolCallDelta(event);
      case 'part_end': {
        const item = this.byPart.get(event.index);
        if (item?.state !== 'open') return '';
        const out = this.release('completed');
        item.state = 'ended';
        this.held = item;
        return out;
      }
      case 'stop':
        this.stopReason = event.reason;
        return this.closeAll();
      case 'usage':
        this.usage = event.usage;
        return '';
      case 'usage_start':
        return '';
    }
  }

  private text(event: Extract<CanonicalEvent, { type: 'text_delta' }>): string {
    let out = '';
    let item = this.byPart.get(event.index);
    if (!item) {
      out += this.release('completed');
      item = this.open(event.index, { kind: 'text', text: '' });
      // A message item is announced empty; its one content part follows in its own event.
      const added: ResponsesMessageItem = { id: this.itemId(item), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
      out += this.frame('response.output_item.added', { output_index: item.outputIndex, item: added });
      out += this.frame('response.content_part.added', { ...this.ref(item), content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    }
    // A delta for a finished or mismatched part cannot be placed; drop it rather than corrupt the stream.
    if (item.kind !== 'text' || item.state !== 'open' || event.text === '') return out;
    if (this.held) out += this.release('completed');
    item.text += event.text;
    return out + this.frame('response.output_text.delta', { ...this.ref(item), content_index: 0, delta: event.text, logprobs: [] });
  }

  private reasoning(event: Extract<CanonicalEvent, { type: 'reasoning_delta' | 'reasoning_opaque' }>): string {
    let out = '';
    let item = this.byPart.get(event.index);
    if (!item) {
      out += this.release('completed');
      item = this.open(event.index, { kind: 'reasoning', text: '', opaque: null, textOpened: false });
      out += this.frame('response.output_item.added', { output_index: item.outputIndex, item: this.wireItem(item) });
    }
    if (item.kind !== 'reasoning' || item.state !== 'open') return out;
    if (this.held) out += this.release('completed');
    if (event.type === 'reasoning_opaque') {
      item.opaque = event.opaque;
      return out;
    }
    if (event.text === '') return out;
    const summary = showsSummary(this.request);
    if (!item.textOpened) {
      item.textOpened = true;
      out += summary
        ? this.frame('response.reasoning_summary_part.added', { ...this.ref(item), summary_index: 0, part: { type: 'summary_text', text: '' } })
        : this.frame('response.content_part.added', { ...this.ref(item), content_index: 0, part: { type: 'reasoning_text', text: '' } });
    }
    item.text += event.text;
    return (
      out +
      (summary
        ? this.frame('response.reasoning_summary_text.delta', { ...this.ref(item), summary_index: 0, delta: event.text })
        : this.frame('response.reasoning_text.delta', { ...this.ref(item), content_index: 0, delta: event.text }))
    );
  }

  private toolCallDelta(event: Extract<CanonicalEvent, { type: 'tool_call_delta' }>): string {
    const item = this.byPart.get(event.index);
    if (item?.kind !== 'tool_call' || item.state !== 'open' || event.argumentsDelta === '') return '';
    const out = this.release('completed');
    item.arguments += event.argumentsDelta;
    // A custom tool's input is sent whole when the call ends (see the class comment).
    if (this.isCustom(item)) return out;
    return out + this.frame('response.function_call_arguments.delta', { ...this.ref(item), delta: event.argumentsDelta });
  }

  finish(usage: CanonicalUsage | null): string {
    const out = this.closeAll();
    const incomplete = this.stopReason === 'max_tokens';
    const response = this.envelope(incomplete ? 'incomplete' : 'completed', this.output(), usage ?? this.usage);
    return out + this.frame(incomplete ? 'response.incomplete' : 'response.completed', { response });
  }

  /** The response object in the closing frames (`response.completed` or `response.incomplete`), for the store. */
  finalResponse(closing: string): Record<string, unknown> | null {
    for (const line of closing.split('\n').reverse()) {
      if (!line.startsWith('data: ')) continue;
      try {
        const data = JSON.parse(line.slice(6)) as Record<string, unknown>;
        if ((data.type === 'response.completed' || data.type === 'response.incomplete') && isObject(data.response)) return data.response;
      } catch {
        // not a frame of ours
      }
    }
    return null;
  }

  fail(message: string, code: string): string {
    // Items never closed were cut short by the failure.
    for (const item of this.items) if (item.state !== 'closed') item.status = 'incomplete';
    const response = this.envelope('failed', this.output(), this.usage, { code, message });
    return this.frame('response.failed', { response });
  }

  private envelope(status: ResponseStatus, output: ResponsesOutputItem[], usage: CanonicalUsage | null, error: { code: string; message: string } | null = null): ResponsesResponse {
    return responseObject(this.who, status, output, usage, this.request, error, this.echo);
  }

  private open(index: number, body: StreamBody): StreamItem {
    const item: StreamItem = { outputIndex: this.items.length, state: 'open', status: 'in_progress', ...body };
    this.items.push(item);
    this.byPart.set(index, item);
    return item;
  }

  /** Sends the `.done` events of the held part, if any. */
  private release(status: ItemStatus): string {
    const item = this.held;
    this.held = null;
    return item ? this.close(item, status) : '';
  }

  /** At the stop: closes every unclosed item; the last one gets the status the stop reason implies. */
  private closeAll(): string {
    this.held = null;
    const pending = this.items.filter((item) => item.state !== 'closed');
    return pending.map((item, i) => this.close(item, i === pending.length - 1 ? lastItemStatus(this.stopReason) : 'completed')).join('');
  }

  private close(item: StreamItem, status: ItemStatus): string {
    item.state = 'closed';
    item.status = status;
    const ref = this.ref(item);
    let out = '';
    if (item.kind === 'text') {
      out += this.frame('response.output_text.done', { ...ref, content_index: 0, text: item.text, logprobs: [] });
      out += this.frame('response.content_part.done', { ...ref, content_index: 0, part: { type: 'output_text', text: item.text, annotations: [] } });
    } else if (item.kind === 'reasoning') {
      if (item.textOpened && showsSummary(this.request)) {
        out += this.frame('response.reasoning_summary_text.done', { ...ref, summary_index: 0, text: item.text });
        out += this.frame('response.reasoning_summary_part.done', { ...ref, summary_index: 0, part: { type: 'summary_text', text: item.text } });
      } else if (item.textOpened) {
        out += this.frame('response.reasoning_text.done', { ...ref, content_index: 0, text: item.text });
        out += this.frame('response.content_part.done', { ...ref, content_index: 0, part: { type: 'reasoning_text', text: item.text } });
      }
    } else if (this.isCustom(item)) {
      const input = customInputOf(item.arguments);
      if (input) out += this.frame('response.custom_tool_call_input.delta', { ...ref, delta: input });
      out += this.frame('response.custom_tool_call_input.done', { ...ref, input });
    } else {
      out += this.frame('response.function_call_arguments.done', { ...ref, arguments: item.arguments });
    }
    return out + this.frame('response.output_item.done', { output_index: item.outputIndex, item: this.wireItem(item) });
  }

  private isCustom(item: StreamItem): boolean {
    return item.kind === 'tool_call' && originOf(this.request, item.name)?.custom === true;
  }

  private ref(item: StreamItem): { item_id: string; output_index: number } {
    return { item_id: this.wireItem(item).id, output_index: item.outputIndex };
  }

  private itemId(item: StreamItem): string {
    return this.wireItem(item).id;
  }

  /** The item as the wire shows it now. */
  private wireItem(item: StreamItem): ResponsesOutputItem {
    let part: OutputPart;
    if (item.kind === 'text') part = { type: 'text', text: item.text };
    else if (item.kind === 'reasoning') part = { type: 'reasoning', text: item.text, summary: [], opaque: item.opaque };
    else part = { type: 'tool_call', id: item.id, name: item.name, arguments: item.arguments };
    return outputItem(part, item.outputIndex, this.who, item.status, this.request);
  }

  private output(): ResponsesOutputItem[] {
    return this.items.map((item) => this.wireItem(item));
  }

  private frame(type: string, payload: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...payload })}\n\n`;
  }
}
