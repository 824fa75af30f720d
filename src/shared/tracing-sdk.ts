import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { parseKeyPairsIntoRecord } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVER_ADDRESS, ATTR_SERVICE_NAME, ERROR_TYPE_VALUE_OTHER } from '@opentelemetry/semantic-conventions';
import type * as GenAi from '@opentelemetry/semantic-conventions/incubating';
import { MONEY_SCALE } from './money.js';
import { ReportingExporter } from './tracing-export.js';
import {
  NOOP_REQUEST_TRACE,
  NOOP_TRACING,
  nonEmpty,
  type AttemptEnd,
  type AttemptSpan,
  type AttemptStart,
  type RequestEnd,
  type RequestTrace,
  type RequestTraceStart,
  type SpanHandle,
  type TracedUpstreamKind,
  type Tracing,
  type TracingLog,
} from './tracing-api.js';

/*
 * GenAI attribute names. In semantic-conventions 1.45.0 they are experimental (and marked as moved to the
 * GenAI conventions repository), exported only from the 700 kB `incubating` entry point: the names are
 * written here, and `typeof` against that entry point's declarations makes tsc fail if one drifts.
 */
const GEN_AI_OPERATION_NAME: typeof GenAi.ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
const GEN_AI_PROVIDER_NAME: typeof GenAi.ATTR_GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
const GEN_AI_REQUEST_MODEL: typeof GenAi.ATTR_GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
const GEN_AI_REQUEST_STREAM: typeof GenAi.ATTR_GEN_AI_REQUEST_STREAM = 'gen_ai.request.stream';
const GEN_AI_RESPONSE_MODEL: typeof GenAi.ATTR_GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
const GEN_AI_TIME_TO_FIRST_CHUNK: typeof GenAi.ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK = 'gen_ai.response.time_to_first_chunk';
const GEN_AI_INPUT_TOKENS: typeof GenAi.ATTR_GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
const GEN_AI_OUTPUT_TOKENS: typeof GenAi.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
const GEN_AI_CACHE_READ_TOKENS: typeof GenAi.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
const GEN_AI_CACHE_WRITE_TOKENS: typeof GenAi.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = 'gen_ai.usage.cache_creation.input_tokens';
const GEN_AI_REASONING_TOKENS: typeof GenAi.ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = 'gen_ai.usage.reasoning.output_tokens';
const CHAT: typeof GenAi.GEN_AI_OPERATION_NAME_VALUE_CHAT = 'chat';
const PROVIDER_OF: Record<TracedUpstreamKind, string> = {
  // The convention's value for the OpenAI API flavour; baikal.upstream.kind says it is a compatible one.
  'openai-compatible': 'openai' satisfies typeof GenAi.GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  anthropic: 'anthropic' satisfies typeof GenAi.GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  'video-jobs': 'baikal.video_jobs',
};

/** Longest string attribute kept (the SDK cuts longer ones): ids and model names fit; nothing else goes in. */
const MAX_ATTRIBUTE_LENGTH = 256;
/** An error code or failure kind: `insufficient_balance`, `upstream_timeout`; never a sentence. */
const CODE_SHAPE = /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/;
/** A credential's id: `env:NAME` (or the bare variable NAME) or a stored credential's uuid; a secret looks like none of them. */
const CREDENTIAL_NAME_SHAPE = /^(?:(?:env:)?[A-Z_][A-Z0-9_]{0,63}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
/** How long shutdown waits for the last export. */
const SHUTDOWN_TIMEOUT_MS = 5_000;

export function startSdkTracing(env: NodeJS.ProcessEnv, log: TracingLog): Tracing {
  const url = tracesUrl(env);
  if (url === null) {
    log.warn('traces: off, the OTLP endpoint is not a valid http(s) URL');
    return NOOP_TRACING;
  }
  const protocol = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL);
  if (protocol !== undefined && protocol !== 'http/json') log.warn({ protocol }, 'traces: only OTLP http/json is implemented; sending http/json');
  const exporter = new OTLPTraceExporter({
    url: url.href,
    headers: { ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseKeyPairsIntoRecord(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    timeoutMillis: positiveInt(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT) ?? positiveInt(env.OTEL_EXPORTER_OTLP_TIMEOUT),
    compression: compressionOf(nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_COMPRESSION) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_COMPRESSION)),
  });
  const reporting = new ReportingExporter(exporter, log);
  const processor = new BatchSpanProcessor({
    exporter: reporting,
    scheduledDelayMillis: positiveInt(env.OTEL_BSP_SCHEDULE_DELAY),
    exportTimeoutMillis: positiveInt(env.OTEL_BSP_EXPORT_TIMEOUT),
    maxQueueSize: positiveInt(env.OTEL_BSP_MAX_QUEUE_SIZE),
    maxExportBatchSize: positiveInt(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE),
  });
  const sampler = samplerOf(env, log);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'baikal' }))
    .merge(resourceFromAttributes(parseKeyPairsIntoRecord(env.OTEL_RESOURCE_ATTRIBUTES)))
    .merge(resourceFromAttributes(nonEmpty(env.OTEL_SERVICE_NAME) ? { [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME!.trim() } : {}));
  const provider = new TracerProvider({
    resource,
    sampler,
    spanProcessors: [processor],
    spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH, attributeCountLimit: 64, eventCountLimit: 0, linkCountLimit: 0 },
  });
  // Where spans go, without userinfo or query (a collector token belongs in OTEL_EXPORTER_OTLP_HEADERS).
  log.info({ endpoint: `${url.origin}${url.pathname}`, sampler: sampler.toString(), serviceName: resource.attributes[ATTR_SERVICE_NAME] }, 'traces: exporting spans over OTLP/HTTP (JSON)');
  return new SdkTracing(provider, provider.getTracer('baikal'), reporting, log);
}

class SdkTracing implements Tracing {
  readonly enabled = true;
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly provider: TracerProvider,
    private readonly tracer: Tracer,
    private readonly exporter: ReportingExporter,
    private readonly log: TracingLog,
  ) {}

  request(start: RequestTraceStart): RequestTrace {
    const operation = start.operation === 'images' ? 'images' : CHAT;
    const attributes: Attributes = {
      [GEN_AI_OPERATION_NAME]: operation,
      [GEN_AI_REQUEST_MODEL]: start.model,
      [GEN_AI_REQUEST_STREAM]: start.stream,
      [ATTR_HTTP_ROUTE]: start.endpoint,
      'baikal.request.id': start.requestId,
      'baikal.operation': start.operation,
    };
    const clock = new TraceClock();
    const span = this.tracer.startSpan(`${operation} ${start.model}`, { kind: SpanKind.SERVER, attributes, startTime: clock.now() }, ROOT_CONTEXT);
    // Sampled out: the rest of the request costs nothing either.
    if (!span.isRecording()) return NOOP_REQUEST_TRACE;
    return new SdkRequestTrace(this.tracer, span, clock, operation, start.model, start.stream);
  }

  shutdown(): Promise<void> {
    this.stopping ??= this.stop();
    return this.stopping;
  }

  private async stop(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), SHUTDOWN_TIMEOUT_MS);
      timer.unref();
    });
    try {
      const result = await Promise.race([this.provider.shutdown().then(() => 'done' as const), timeout]);
      if (result === 'timeout') this.log.warn({ waitedMs: SHUTDOWN_TIMEOUT_MS }, 'traces: the last export did not finish in time; its spans are lost');
    } catch {
      // The exporter's failure is reported just below, with its counts.
    } finally {
      clearTimeout(timer);
      this.exporter.reportPending();
    }
  }
}

/**
 * One time base for all spans of a trace: the wall clock read once, then the monotonic clock. (The SDK
 * reads Date.now(), whole milliseconds, for each span's start: a child could then end after its parent.)
 */
class TraceClock {
  private readonly origin = Date.now() - performance.now();

  /** Milliseconds since the epoch, with a fraction. */
  now(): number {
    return this.origin + performance.now();
  }
}

class SdkRequestTrace implements RequestTrace {
  private readonly context: Context;
  private attempts = 0;
  private answered = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly clock: TraceClock,
    private readonly operation: string,
    private readonly model: string,
    private readonly stream: boolean,
  ) {
    this.context = trace.setSpan(ROOT_CONTEXT, span);
  }

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  admission(): SpanHandle {
    return new StageSpan(this.tracer.startSpan('baikal.admission', { kind: SpanKind.INTERNAL, startTime: this.clock.now() }, this.context), this.clock);
  }

  settlement(): SpanHandle {
    return new StageSpan(this.tracer.startSpan('baikal.settlement', { kind: SpanKind.INTERNAL, startTime: this.clock.now() }, this.context), this.clock);
  }

  attempt(start: AttemptStart): AttemptSpan {
    this.attempts += 1;
    const attributes: Attributes = {
      [GEN_AI_OPERATION_NAME]: this.operation,
      [GEN_AI_PROVIDER_NAME]: PROVIDER_OF[start.kind] ?? ERROR_TYPE_VALUE_OTHER,
      [GEN_AI_REQUEST_MODEL]: start.upstreamModel,
      [GEN_AI_REQUEST_STREAM]: this.stream,
      'baikal.upstream.id': start.upstreamId,
      'baikal.upstream.kind': start.kind,
      'baikal.attempt.number': this.attempts,
    };
    if (start.credentialId !== undefined) attributes['baikal.upstream.credential'] = CREDENTIAL_NAME_SHAPE.test(start.credentialId) ? start.credentialId : 'unrecognized';
    if (start.serverAddress) attributes[ATTR_SERVER_ADDRESS] = start.serverAddress;
    const span = this.tracer.startSpan('baikal.upstream_attempt', { kind: SpanKind.CLIENT, attributes, startTime: this.clock.now() }, this.context);
    return new UpstreamAttemptSpan(span, this.clock, this.stream, () => (this.answered = true));
  }

  end(result: RequestEnd): void {
    const span = this.span;
    if (!span.isRecording()) return;
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
    span.setAttribute('baikal.attempts', this.attempts);
    if (this.answered && result.status < 400) span.setAttribute(GEN_AI_RESPONSE_MODEL, this.model);
    const usage = result.usage;
    if (usage) {
      span.setAttribute(GEN_AI_INPUT_TOKENS, usage.inputTokens);
      span.setAttribute(GEN_AI_OUTPUT_TOKENS, usage.outputTokens);
      if (usage.cacheReadTokens != null) span.setAttribute(GEN_AI_CACHE_READ_TOKENS, usage.cacheReadTokens);
      if (usage.cacheWriteTokens != null) span.setAttribute(GEN_AI_CACHE_WRITE_TOKENS, usage.cacheWriteTokens);
      if (usage.reasoningTokens != null) span.setAttribute(GEN_AI_REASONING_TOKENS, usage.reasoningTokens);
    }
    const amount = usdOf(result.amountUsd);
    if (amount !== undefined) span.setAttribute('baikal.cost.amount_usd', amount);
    const upstreamCost = usdOf(result.upstreamCostUsd);
    if (upstreamCost !== undefined) span.setAttribute('baikal.cost.upstream_usd', upstreamCost);
    if (result.errorCode !== null) span.setAttribute(ATTR_ERROR_TYPE, codeOf(result.errorCode));
    // As for HTTP server spans: a 4xx is the client's doing (error.type says which), a 5xx is ours.
    if (result.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(this.clock.now());
  }
}

class StageSpan implements SpanHandle {
  constructor(
    private readonly span: Span,
    private readonly clock: TraceClock,
  ) {}

  end(errorCode?: string | null): void {
    if (!this.span.isRecording()) return;
    if (errorCode != null) {
      this.span.setAttribute(ATTR_ERROR_TYPE, codeOf(errorCode));
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end(this.clock.now());
  }
}

class UpstreamAttemptSpan implements AttemptSpan {
  constructor(
    private readonly span: Span,
    private readonly clock: TraceClock,
    private readonly stream: boolean,
    private readonly answered: () => void,
  ) {}

  end(result: AttemptEnd): void {
    const span = this.span;
    if (!span.isRecording()) return;
    const outcome = codeOf(result.outcome);
    span.setAttribute('baikal.attempt.outcome', outcome);
    if (result.status != null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
    if (result.firstByteMs != null) {
      span.setAttribute('baikal.upstream.first_byte_ms', result.firstByteMs);
      if (this.stream) span.setAttribute(GEN_AI_TIME_TO_FIRST_CHUNK, result.firstByteMs / 1000);
    }
    if (result.retryAfterSeconds != null) span.setAttribute('baikal.upstream.retry_after_s', result.retryAfterSeconds);
    if (outcome === 'ok') {
      this.answered();
    } else {
      span.setAttribute(ATTR_ERROR_TYPE, outcome);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(this.clock.now());
  }
}

/** The traces URL as the OTLP exporter spec has it: the signal's own endpoint as is, else the base + v1/traces. */
function tracesUrl(env: NodeJS.ProcessEnv): URL | null {
  const own = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const text = own ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (text === undefined || !URL.canParse(text)) return null;
  const url = new URL(text);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the SDK configuration spec names them. */
function samplerOf(env: NodeJS.ProcessEnv, log: TracingLog): Sampler {
  const name = nonEmpty(env.OTEL_TRACES_SAMPLER)?.toLowerCase() ?? 'parentbased_always_on';
  const ratio = () => {
    const arg = nonEmpty(env.OTEL_TRACES_SAMPLER_ARG);
    const value = arg === undefined ? 1 : Number(arg);
    if (Number.isFinite(value) && value >= 0 && value <= 1) return new TraceIdRatioBasedSampler(value);
    log.warn({ OTEL_TRACES_SAMPLER_ARG: arg }, 'traces: the sampler ratio must be a number from 0 to 1; using 1');
    return new TraceIdRatioBasedSampler(1);
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default:
      log.warn({ OTEL_TRACES_SAMPLER: name }, 'traces: unknown sampler; using parentbased_always_on');
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function positiveInt(value: string | undefined): number | undefined {
  const number = Number(nonEmpty(value));
  return Number.isInteger(number) && number > 0 ? number : undefined;
}

/** The exporter's CompressionAlgorithm, a string enum its package does not re-export. */
type Compression = NonNullable<ConstructorParameters<typeof OTLPTraceExporter>[0]>['compression'];

function compressionOf(value: string | undefined): Compression {
  return value === 'gzip' || value === 'none' ? (value as Compression) : undefined;
}

function codeOf(code: string): string {
  return CODE_SHAPE.test(code) ? code : ERROR_TYPE_VALUE_OTHER;
}

function usdOf(amount: bigint | string | null | undefined): number | undefined {
  if (amount == null) return undefined;
  const value = typeof amount === 'bigint' ? Number(amount) / 10 ** MONEY_SCALE : Number(amount);
  return Number.isFinite(value) ? value : undefined;
}
