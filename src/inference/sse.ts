import type { Readable } from 'node:stream';

/**
 * Hands each chunk of `body` to `onChunk` as it arrives. 'data' events cost about half of what async
 * iteration does per chunk, which matters at thousands of stream events a second. While a promise
 * returned by `onChunk` is pending (a slow client), the body is paused, so backpressure reaches the
 * upstream. Rejects on a read error, an `onChunk` error, or a body that closes before its end.
 */
export function eachChunk(body: Readable, onChunk: (chunk: Buffer) => Promise<void> | void): Promise<void> {
  return new Promise((resolve, reject) => {
    let ended = false;
    /** The work of the last chunk, when it is still going: the body may end before it finishes. */
    let inFlight: Promise<void> | null = null;
    const fail = (error: unknown) => {
      body.off('data', onData);
      body.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      let pending: Promise<void> | void;
      try {
        pending = onChunk(chunk);
      } catch (error) {
        return fail(error);
      }
      if (pending) {
        body.pause();
        const current: Promise<void> = pending.then(
          () => {
            if (inFlight === current) inFlight = null;
            body.resume();
          },
          // The promise this returns is settled once fail() has rejected; it never rejects itself.
          fail,
        );
        inFlight = current;
      }
    };
    body.on('data', onData);
    body.once('end', () => {
      ended = true;
      // The last chunk's writes (and a store before them) finish before the caller ends the response.
      if (inFlight) void inFlight.then(() => resolve());
      else resolve();
    });
    body.once('error', reject);
    body.once('close', () => {
      if (!ended) reject(Object.assign(new Error('the stream closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}

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
