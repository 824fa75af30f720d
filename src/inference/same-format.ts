import type { CanonicalUsage } from './canonical.js';
import type { SseEvent } from './sse.js';

/**
 * When the client and the upstream speak the same wire format, the upstream's own answer goes to the
 * client, rewritten only where it must be: our id, the public model id, no upstream error text. What
 * the hub format does not model (chat logprobs, Anthropic thinking blocks with their signatures,
 * Responses reasoning items) survives this way. Each client format has one small rewriter for JSON
 * answers and one for streams (`sameFormat`, in its own directory); the pipeline runs them in one
 * relay loop. This is what they share.
 */

/** Rewrites an upstream stream event by event (stateful: one per response); the relay's codec for a same-format answer. */
export abstract class SameFormatStream {
  /** Usage the upstream reported as final; null until then. */
  usage: CanonicalUsage | null = null;
  /** True once the upstream said the answer is complete. */
  done = false;
  /** An error the upstream reported in-band, for the operator log only. */
  error: string | null = null;
  /** Text delivered so far, for estimating a cut stream's usage. */
  delivered = '';
  /** The completed response as the client received it, where the format has one (Responses: for the store). */
  finalResponse: Record<string, unknown> | null = null;

  /** Same-format streams open with the upstream's own first event. */
  start(): string {
    return '';
  }

  /** The client's frames for one upstream event ('' to drop it). */
  abstract push(event: SseEvent): string;
  /** Frames that end a complete stream after the upstream's last event (the upstream's own usage stands). */
  abstract finish(): string;
  /** An in-band error that ends the stream (our own words only). */
  abstract fail(message: string, code: string): string;
}

/** Usage with the reasoning count a format reports beside it. */
export const withReasoning = (usage: Omit<CanonicalUsage, 'reasoningTokens'> | null, reasoningTokens: number | null = null): CanonicalUsage | null =>
  usage ? { ...usage, reasoningTokens } : null;

/** An object, or an empty one for anything else: upstream answers are read defensively. */
export const record = (value: unknown): Record<string, any> => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, any>) : {});

/** A stream event's data as an object, or null when it is not one. */
export function parseData(data: string): Record<string, any> | null {
  try {
    const parsed: unknown = JSON.parse(data);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, any>) : null;
  } catch {
    return null;
  }
}
