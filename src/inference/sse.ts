/**
 * Splits a server-sent-events byte stream into events as bytes arrive. Only the unfinished tail of
 * the last event is kept between chunks, so a stream passes through without being buffered.
 */
export class SseSplitter {
  private readonly decoder = new TextDecoder();
  private tail = '';

  /** The complete events in this chunk: each one's `data` (lines joined) or null for a comment-only event. */
  push(chunk: Uint8Array): SseEvent[] {
    this.tail += this.decoder.decode(chunk, { stream: true });
    const events: SseEvent[] = [];
    if (this.tail.includes('\r')) {
      const blocks = this.tail.split(/\r?\n\r?\n/);
      this.tail = blocks.pop() ?? '';
      for (const block of blocks) pushEvent(events, block);
      return events;
    }
    // The usual case, plain \n line ends: find the blank lines without a regular expression.
    let start = 0;
    for (let end = this.tail.indexOf('\n\n'); end !== -1; end = this.tail.indexOf('\n\n', start)) {
      pushEvent(events, this.tail.slice(start, end));
      start = end + 2;
    }
    this.tail = start ? this.tail.slice(start) : this.tail;
    return events;
  }

  /** Whatever was left unterminated when the stream ended. */
  end(): SseEvent[] {
    const rest = this.tail + this.decoder.decode();
    this.tail = '';
    const event = rest.trim() ? parseEvent(rest) : null;
    return event ? [event] : [];
  }
}

export interface SseEvent {
  event: string | null;
  data: string;
}

function pushEvent(events: SseEvent[], block: string): void {
  // Most events are one `data:` line.
  const event = block.startsWith('data: ') && !block.includes('\n') ? { event: null, data: block.slice(6) } : parseEvent(block);
  if (event) events.push(event);
}

function parseEvent(block: string): SseEvent | null {
  let event: string | null = null;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    else if (line.startsWith('event:')) event = line.slice(6).trim();
  }
  return data.length ? { event, data: data.join('\n') } : null;
}

/** Estimated tokens of text the upstream produced but never counted (a cut or cancelled stream): about 4 characters a token. */
export function estimateTokens(text: string): number {
  return text ? Math.ceil(text.length / 4) : 0;
}
