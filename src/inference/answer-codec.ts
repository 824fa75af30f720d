import { textOf, type CanonicalUsage, type ResponseIdentity } from './canonical.js';
import type { ClientFormat, ParsedRequest } from './formats/client-format.js';
import type { ProviderKind } from './providers/index.js';
import type { SseEvent } from './sse.js';

/**
 * How one answer travels from the upstream's wire format to the client's. The relay runs one loop for
 * every client format x upstream kind; what differs is only the codec it is handed:
 * - through the hub: the provider's decoder (upstream -> canonical events) and the client format's
 *   encoder (canonical events -> client frames);
 * - same format (chat to a chat upstream, Messages to an Anthropic one, Responses to a native
 *   Responses upstream): the upstream's own events, rewritten where they must be (our id, the public
 *   model, documented fields), so what the hub does not model (logprobs, signed thinking blocks,
 *   reasoning items, unknown fields of the format) reaches the client.
 */
export interface AnswerCodec {
  json(upstreamBody: unknown): JsonAnswer;
  stream(): StreamTranscoder;
}

export interface JsonAnswer {
  /** Usage the upstream reported; null when it reported none (the relay then bills an estimate). */
  usage: CanonicalUsage | null;
  /** The text the answer delivers, for that estimate. */
  deliveredText: string;
  /** The client's body, given the usage billed. */
  render(usage: CanonicalUsage): object;
}

/** One streamed answer (stateful: one per response). */
export interface StreamTranscoder {
  /** Frames that open the stream before any upstream event ('' when the format waits for the first one). */
  start(): string;
  /** The client's frames for one upstream event ('' to drop it). */
  push(event: SseEvent): string;
  /** True once the upstream said the answer is complete. */
  readonly done: boolean;
  /** An error the upstream reported in-band, for the operator log only. */
  readonly error: string | null;
  /** Usage the upstream reported as final; null until then. */
  readonly usage: CanonicalUsage | null;
  /** Text delivered so far, for estimating a cut stream's usage. */
  readonly delivered: string;
  /** The completed response as the client receives it, where the format has one (Responses: for the store). */
  readonly finalResponse: Record<string, unknown> | null;
  /** Frames that end a complete stream; `usage` is what is billed. */
  finish(usage: CanonicalUsage): string;
  /** An in-band error that ends the stream (our own words only). */
  fail(message: string, code: string): string;
}

/** Decoder and encoder through the canonical hub. */
class HubStream implements StreamTranscoder {
  private readonly decoder;
  private readonly encoder;
  usage: CanonicalUsage | null = null;
  delivered = '';
  private last: string | null = null;

  constructor(kind: ProviderKind, format: ClientFormat, who: ResponseIdentity, parsed: ParsedRequest) {
    this.decoder = kind.decoder();
    this.encoder = format.encoder(who, parsed);
  }

  get done(): boolean {
    return this.decoder.done;
  }

  get error(): string | null {
    return this.decoder.error;
  }

  get finalResponse(): Record<string, unknown> | null {
    // Read from the closing frames only when asked (a stored Responses answer): most streams never are.
    return this.last === null ? null : (this.encoder.finalResponse?.(this.last) ?? null);
  }

  start(): string {
    return this.encoder.start();
  }

  push(event: SseEvent): string {
    let out = '';
    for (const canonical of this.decoder.push(event)) {
      if (canonical.type === 'usage') this.usage = canonical.usage;
      else if (canonical.type === 'text_delta' || canonical.type === 'reasoning_delta') this.delivered += canonical.text;
      else if (canonical.type === 'tool_call_delta') this.delivered += canonical.argumentsDelta;
      out += this.encoder.event(canonical);
    }
    return out;
  }

  finish(usage: CanonicalUsage): string {
    return (this.last = this.encoder.finish(usage));
  }

  fail(message: string, code: string): string {
    return this.encoder.fail(message, code);
  }
}

/** The codec for one answer: same format when the upstream speaks the client's, else through the hub. */
export function codecFor(sameFormat: boolean, kind: ProviderKind, format: ClientFormat, who: ResponseIdentity, parsed: ParsedRequest): AnswerCodec {
  if (sameFormat) {
    const rewriter = format.sameFormat;
    return {
      json(upstreamBody) {
        const rewritten = rewriter.json(upstreamBody, who, parsed);
        return { usage: rewritten.usage, deliveredText: rewritten.deliveredText, render: () => rewritten.body };
      },
      stream: () => rewriter.stream(who, parsed),
    };
  }
  return {
    json(upstreamBody) {
      const reply = kind.fromResponse(upstreamBody);
      return { usage: reply.usage, deliveredText: textOf(reply.parts), render: (usage) => format.render({ ...reply, usage }, who, parsed) };
    },
    stream: () => new HubStream(kind, format, who, parsed),
  };
}
