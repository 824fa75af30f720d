import type { Cancellation } from '../shared/cancellation.js';
import type { Logger } from '../shared/logging.js';
import type { UpstreamClient } from '../upstreams/client.js';
import { BodyTooLargeError, type UpstreamAnswer } from '../upstreams/upstream-body.js';
import { clientErrorOf, UpstreamFailure } from '../upstreams/failures.js';
import type { AnswerCodec, StreamTranscoder } from './answer-codec.js';
import { promptText, type CanonicalUsage } from './canonical.js';
import type { ParsedRequest } from './formats/client-format.js';
import type { ResponseSink } from './inference-call.js';
import type { RequestWindow, Slot } from './limits.js';
import { RoutedFailure, type Outcome } from './settlement.js';
import { estimateTokens, SseSplitter } from './sse.js';
import { imageOf, renderImage } from './openai-images.js';

/** Largest non-streamed upstream response we accept. */
const MAX_JSON_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * The sink a relay writes its answer to: the request's concurrency slot is freed just before the
 * answer's last bytes (a JSON body, a stream's end) go out. A client at its concurrency limit that
 * sends its next request the moment it reads this one's end is then admitted, even when the release
 * has to travel to Redis. (A small class: wrapping with `Object.create(sink)` made each request's sink
 * a prototype, about 12 us of V8 bookkeeping per request.)
 */
export class SlotFreeingSink implements ResponseSink {
  constructor(
    private readonly sink: ResponseSink,
    private readonly slot: Slot,
  ) {}

  get signal(): Cancellation {
    return this.sink.signal;
  }

  get firstByteAt(): number | undefined {
    return this.sink.firstByteAt;
  }

  sendJson(body: object): void {
    this.slot.release();
    this.sink.sendJson(body);
  }

  setHeader(name: string, value: string): void {
    this.sink.setHeader(name, value);
  }

  limits(window: RequestWindow): void {
    this.sink.limits(window);
  }

  startStream(): void {
    this.sink.startStream();
  }

  write(text: string): Promise<void> | void {
    return this.sink.write(text);
  }

  end(last?: string): void {
    this.slot.release();
    this.sink.end(last);
  }
}

/** What the relay needs to know about the request besides the upstream's answer. */
export interface RelayRequest {
  parsed: ParsedRequest;
  codec: AnswerCodec;
  /** Keeps a Responses answer before its last bytes go out (`store`); null otherwise. */
  save: ((response: Record<string, unknown>) => Promise<void>) | null;
  /** Settles a successful answer just before its last bytes go out (Settlement.after). */
  settle?: (outcome: Outcome) => void;
}

/**
 * The third stage: the upstream's answer to the client, JSON or SSE, through the request's codec (the
 * same loop for every client format and upstream kind). Usage comes from the upstream; a cut or
 * cancelled answer is billed on an estimate of what was delivered.
 */
export class Relay {
  constructor(private readonly deps: { upstreams: UpstreamClient; log: Logger; stopping: () => boolean }) {}

  /** Reads a whole JSON answer (bounded); a client that left meanwhile makes the request `cancelled`. */
  async readJson(response: UpstreamAnswer, upstreamId: string, sink: ResponseSink): Promise<{ body: any } | { cancelled: true }> {
    try {
      const length = Number(response.headers['content-length']);
      if (length > MAX_JSON_RESPONSE_BYTES) throw new BodyTooLargeError(`response of ${length} bytes`);
      return { body: JSON.parse(await response.body.text(MAX_JSON_RESPONSE_BYTES)) };
    } catch (error) {
      if (sink.signal.cancelled) return { cancelled: true };
      const failure =
        error instanceof SyntaxError
          ? new UpstreamFailure('server_error', upstreamId, 'response is not JSON')
          : error instanceof BodyTooLargeError
            ? new UpstreamFailure('server_error', upstreamId, error.message)
            : this.deps.upstreams.failureOf(error, upstreamId);
      this.deps.log.warn({ upstream: upstreamId, kind: failure.kind, detail: failure.detail }, 'upstream response unreadable');
      throw new RoutedFailure(clientErrorOf(failure), upstreamId);
    }
  }

  async text(request: RelayRequest, response: UpstreamAnswer, upstreamId: string, sink: ResponseSink): Promise<Outcome> {
    return request.parsed.canonical.stream ? this.stream(request, response, upstreamId, sink) : this.json(request, response, upstreamId, sink);
  }

  /** One generated image, billed per generation; an image the client never received is not billed. */
  async image(response: UpstreamAnswer, upstreamId: string, sink: ResponseSink, settle?: (outcome: Outcome) => void): Promise<Outcome> {
    const read = await this.readJson(response, upstreamId, sink);
    if ('cancelled' in read) return { status: 'cancelled', errorCode: 'client_closed', usage: null, upstreamId };
    const image = imageOf(read.body);
    if (!image) throw new RoutedFailure(clientErrorOf(new UpstreamFailure('server_error', upstreamId, 'image response without data[0].b64_json')), upstreamId);
    const outcome: Outcome = { status: 'success', errorCode: null, usage: null, generations: 1, upstreamId };
    settle?.(outcome);
    sink.sendJson(renderImage(image, Math.floor(Date.now() / 1000)));
    return outcome;
  }

  private async json({ parsed, codec, save, settle }: RelayRequest, response: UpstreamAnswer, upstreamId: string, sink: ResponseSink): Promise<Outcome> {
    const read = await this.readJson(response, upstreamId, sink);
    if ('cancelled' in read) return { status: 'cancelled', errorCode: 'client_closed', usage: estimatedUsage(parsed, ''), upstreamId };
    const answer = codec.json(read.body);
    if (!answer.usage) this.deps.log.warn({ upstream: upstreamId }, 'upstream reported no usage; billing an estimate');
    const usage = answer.usage ?? estimatedUsage(parsed, answer.deliveredText);
    const body = answer.render(usage);
    await save?.(body as Record<string, unknown>);
    const outcome: Outcome = { status: 'success', errorCode: null, usage, upstreamId };
    settle?.(outcome);
    sink.sendJson(body);
    return outcome;
  }

  /**
   * Each upstream event is transcoded and written as soon as it arrives (only an unfinished event is
   * ever kept). A write is awaited only when the client pushes back; meanwhile the body keeps up to its
   * high-water mark, then pauses the upstream, so backpressure reaches it. The loop iterates the body
   * rather than handing it a callback: with a callback over this state, every stream's objects outlived
   * V8's next young-generation collection and were promoted (~13 KB a stream at 100 streams/s, whatever
   * the young generation's size), each later freed by a mark-compact; iterated, ~1 KB (docs/benchmarks-history.md,
   * eighteenth step).
   */
  private async stream({ parsed, codec, save, settle }: RelayRequest, response: UpstreamAnswer, upstreamId: string, sink: ResponseSink): Promise<Outcome> {
    const splitter = new SseSplitter();
    const stream: StreamTranscoder = codec.stream();
    let saved = save === null;
    let failure: UpstreamFailure | null = null;
    sink.startStream();
    // Some formats open their stream only with the first upstream event (Messages: to put early usage in message_start).
    const opening = stream.start();
    if (opening) await sink.write(opening);
    try {
      for await (const chunk of response.body) {
        let out = '';
        for (const event of splitter.push(chunk)) out += stream.push(event);
        if (!saved && stream.done && stream.finalResponse) {
          // Kept before the client reads the end, so its next request can already refer to it.
          saved = true;
          await save!(stream.finalResponse);
        }
        const pushedBack = out ? sink.write(out) : undefined;
        if (pushedBack) await pushedBack;
      }
    } catch (error) {
      if (!sink.signal.cancelled) failure = this.deps.upstreams.failureOf(error, upstreamId);
    }
    if (stream.error) failure ??= this.deps.upstreams.failure('server_error', upstreamId, `stream error event: ${stream.error}`);

    const billed = (): CanonicalUsage => stream.usage ?? estimatedUsage(parsed, stream.delivered);
    if (sink.signal.cancelled) return { status: 'cancelled', errorCode: 'client_closed', usage: billed(), upstreamId };
    if (stream.done && !failure) {
      if (!stream.usage) this.deps.log.warn({ upstream: upstreamId }, 'upstream stream reported no usage; billing an estimate');
      const usage = billed();
      const last = stream.finish(usage);
      if (!saved && stream.finalResponse) await save!(stream.finalResponse);
      const outcome: Outcome = { status: 'success', errorCode: null, usage, upstreamId };
      settle?.(outcome);
      sink.end(last);
      return outcome;
    }
    return this.interrupted(sink, failure, upstreamId, stream, billed());
  }

  /** A stream that broke after the client got its first byte: no failover now; say so in-band, bill what was delivered. */
  private interrupted(sink: ResponseSink, failure: UpstreamFailure | null, upstreamId: string, stream: StreamTranscoder, usage: CanonicalUsage): Outcome {
    if (this.deps.stopping()) {
      sink.end(stream.fail('The service is restarting and ended this stream; retry the request', 'shutting_down'));
      return { status: 'error', errorCode: 'shutting_down', usage, upstreamId };
    }
    const cause = failure ?? new UpstreamFailure('connection', upstreamId, 'stream ended early');
    this.deps.log.warn({ upstream: upstreamId, kind: cause.kind, detail: cause.detail }, 'upstream stream failed mid-way');
    sink.end(stream.fail(clientErrorOf(cause).message, 'stream_interrupted'));
    return { status: 'error', errorCode: 'stream_interrupted', usage, upstreamId };
  }
}

/** Usage the upstream never reported: the prompt and the delivered text, estimated. */
function estimatedUsage(parsed: ParsedRequest, deliveredText: string): CanonicalUsage {
  return { inputTokens: estimateTokens(promptText(parsed.canonical)), outputTokens: estimateTokens(deliveredText), cacheReadTokens: null, cacheWriteTokens: null, reasoningTokens: null };
}
