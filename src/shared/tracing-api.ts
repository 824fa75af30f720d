import type { Logger } from './logging.js';
import type { Units } from './money.js';

/**
 * The tracing API the /v1 pipeline calls (import it from ./tracing.js), and its no-op. Kept apart from
 * tracing.ts so that the SDK side (tracing-sdk.ts, loaded only when traces are on) can use it.
 *
 * OpenTelemetry traces of the /v1 pipeline: one request span (SERVER) with its admission, upstream
 * attempts (CLIENT) and settlement as children, sent over OTLP/HTTP (JSON) to the operator's collector.
 *
 * Off unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set: then every call
 * below answers a shared no-op object and the OpenTelemetry SDK is never even loaded.
 *
 * What a span may hold is decided by this API's shape: ids, model names, counts, amounts, HTTP status
 * codes and error codes. There is no parameter for a credential, a header, a prompt, a completion or
 * an upstream's error text, and the free-form strings that remain are checked (see tracing-sdk.ts).
 */

/** The GenAI operation a /v1 endpoint performs (gen_ai.operation.name is `chat` for the first three). */
export type TracedOperation = 'chat' | 'responses' | 'messages' | 'images';

/** The upstream kinds of src/upstreams/config.ts (gen_ai.provider.name is derived from it). */
export type TracedUpstreamKind = 'openai-compatible' | 'anthropic' | 'video-jobs';

/** Why an attempt failed: src/upstreams/failures.ts's kinds, and `aborted` (client gone, graceful stop). */
export type AttemptFailureKind = 'timeout' | 'connection' | 'rate_limited' | 'server_error' | 'rejected' | 'misconfigured' | 'aborted';

export type AttemptOutcome = 'ok' | AttemptFailureKind;

export interface RequestTraceStart {
  /** The id the client sees as x-request-id. */
  requestId: string;
  /** The route, e.g. `/v1/chat/completions` (http.route). */
  endpoint: string;
  operation: TracedOperation;
  /** The public model id the client asked for (gen_ai.request.model). */
  model: string;
  stream: boolean;
}

export interface AttemptStart {
  upstreamId: string;
  kind: TracedUpstreamKind;
  /** The model name sent to the upstream (the route's modelMap applied). */
  upstreamModel: string;
  /**
   * Which credential of the upstream's pool was used: its id (`env:OPENAI_KEY_2` for one read from an
   * environment variable, a uuid for one stored encrypted). Anything not shaped like an id (a secret passed
   * by mistake) is not recorded.
   */
  credentialId?: string;
  /** The upstream's host name (server.address), when the caller has it at hand. */
  serverAddress?: string;
}

export interface AttemptEnd {
  outcome: AttemptOutcome;
  /** The upstream's HTTP status, when it answered one. */
  status?: number | null;
  /** Milliseconds from the attempt's start to the upstream's first byte. */
  firstByteMs?: number | null;
  /** What the upstream's Retry-After said (a rate-limited or overloaded upstream). */
  retryAfterSeconds?: number | null;
}

/** Token counts as the pipeline's TokenUsage/CanonicalUsage has them (inputTokens includes the cache buckets). */
export interface TraceUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  reasoningTokens?: number | null;
}

export interface RequestEnd {
  /** The HTTP status the client got (for a stream: the one its headers carried). */
  status: number;
  /** The public error code (DomainError.reason), null on success. */
  errorCode: string | null;
  usage: TraceUsage | null;
  /**
   * What the client was billed: a bigint is in Units (10^-10 USD, src/shared/money.ts), a string a plain
   * decimal USD amount. Recorded as a double (traces are not the ledger).
   */
  amountUsd: Units | string | null;
  /** What the upstream call cost us, when known; same forms as amountUsd. */
  upstreamCostUsd?: Units | string | null;
}

/** A stage's span: ended once, with an error code when the stage failed (error.type, status ERROR). */
export interface SpanHandle {
  end(errorCode?: string | null): void;
}

export interface AttemptSpan {
  end(result: AttemptEnd): void;
}

export interface RequestTrace {
  /** The trace id (32 hex digits) to put in a log line; undefined when this request is not traced. */
  readonly traceId: string | undefined;
  admission(): SpanHandle;
  attempt(start: AttemptStart): AttemptSpan;
  settlement(): SpanHandle;
  end(result: RequestEnd): void;
}

export interface Tracing {
  /** False when no endpoint is configured: every call is a no-op; callers may skip building arguments. */
  readonly enabled: boolean;
  request(start: RequestTraceStart): RequestTrace;
  /** Exports what is buffered and stops; never rejects. Called once, on graceful stop. */
  shutdown(): Promise<void>;
}

/** Where tracing writes its own few lines (start, export failures once in a while). */
export type TracingLog = Pick<Logger, 'info' | 'warn'>;

const NOOP_HANDLE: SpanHandle = Object.freeze({ end: () => undefined });
const NOOP_ATTEMPT: AttemptSpan = Object.freeze({ end: () => undefined });

/** The one object every untraced request shares: no allocation per request. */
export const NOOP_REQUEST_TRACE: RequestTrace = Object.freeze({
  traceId: undefined,
  admission: () => NOOP_HANDLE,
  attempt: () => NOOP_ATTEMPT,
  settlement: () => NOOP_HANDLE,
  end: () => undefined,
});

export const NOOP_TRACING: Tracing = Object.freeze({
  enabled: false,
  request: () => NOOP_REQUEST_TRACE,
  shutdown: () => Promise.resolve(),
});

/** A variable's value, trimmed; undefined when unset or blank. */
export function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
