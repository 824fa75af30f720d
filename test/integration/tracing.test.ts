import { decode, startReceiver as startOtlpReceiver, type DecodedSpan, type Receiver } from '../helpers/otlp.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { CanonicalUsage } from '../../src/inference/canonical.js';
import {
  createTracing,
  NOOP_REQUEST_TRACE,
  NOOP_TRACING,
  type AttemptFailureKind,
  type RequestTraceStart,
  type TracedUpstreamKind,
  type Tracing,
} from '../../src/shared/tracing.js';
import type { Upstream } from '../../src/upstreams/config.js';
import { UpstreamFailure, type UpstreamFailureKind } from '../../src/upstreams/failures.js';

/**
 * The tracing module against a real OTLP/HTTP receiver (a local HTTP server decoding what the official
 * exporter sends: OTLP JSON). Every trace here goes through the SDK, its batch processor and the exporter.
 */

const CANARY = 'CANARY-7f3a9e-sk-live-do-not-export';
/** The collector's own token: sent as a header, and nowhere else. */
const COLLECTOR_TOKEN = 'collector-secret-51d2';

// The pipeline's own types fit the module's (tsc fails here if they drift apart).
const failureKind = (kind: UpstreamFailureKind): AttemptFailureKind => kind;
const upstreamKind = (kind: Upstream['kind']): TracedUpstreamKind => kind;

const receivers: Receiver[] = [];

async function startReceiver(status = 200): Promise<Receiver> {
  const receiver = await startOtlpReceiver(status);
  receivers.push(receiver);
  return receiver;
}

const tracings: Tracing[] = [];

afterEach(async () => {
  await Promise.all(tracings.splice(0).map((t) => t.shutdown()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** A real pino logger writing its lines into an array. */
function captureLog() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

async function tracingFor(env: NodeJS.ProcessEnv, log = captureLog().log): Promise<Tracing> {
  const tracing = await createTracing(env, log);
  tracings.push(tracing);
  return tracing;
}

function only(spans: DecodedSpan[], name: string): DecodedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
}

// OTLP's SpanKind and StatusCode numbers.
const INTERNAL = 1;
const SERVER = 2;
const CLIENT = 3;
const UNSET = 0;
const ERROR = 2;

const CHAT_REQUEST: RequestTraceStart = { requestId: 'req_trace_1', endpoint: '/v1/chat/completions', operation: 'chat', model: 'gen-5.6-luna', stream: true };

/**
 * One chat request as the pipeline traces it: admission, an attempt that timed out (its operator detail carries the
 * canary), an answered attempt given a secret where a credential's name belongs, settlement, the end with usage.
 */
function recordTwoAttempts(tracing: Tracing) {
  const request = tracing.request(CHAT_REQUEST);
  expect(request.traceId).toMatch(/^[0-9a-f]{32}$/);
  const admission = request.admission();
  admission.end();

  const first = request.attempt({ upstreamId: 'alpha', kind: upstreamKind('openai-compatible'), upstreamModel: 'luna-large-2026', credentialId: 'ALPHA_KEY', serverAddress: 'alpha.example.net' });
  // A real failure as src/upstreams makes it: its operator detail carries the upstream's words (the canary).
  const failure = new UpstreamFailure('timeout', 'alpha', `UND_ERR_HEADERS_TIMEOUT: upstream said ${CANARY}`, 504, 7);
  first.end({
    outcome: failureKind(failure.kind),
    status: failure.status,
    retryAfterSeconds: failure.retryAfterSeconds,
    // @ts-expect-error there is no parameter for an upstream's words: they cannot reach a span
    detail: failure.detail,
  });

  // A secret passed where a credential's NAME belongs is not recorded.
  const second = request.attempt({ upstreamId: 'beta', kind: upstreamKind('anthropic'), upstreamModel: 'claude-luna-5', credentialId: `sk-ant-${CANARY}` });
  second.end({ outcome: 'ok', status: 200, firstByteMs: 250 });

  const settlement = request.settlement();
  settlement.end();
  const usage: CanonicalUsage = { inputTokens: 1200, outputTokens: 34, cacheReadTokens: 1000, cacheWriteTokens: null, reasoningTokens: 5 };
  request.end({ status: 200, errorCode: null, usage, amountUsd: 123_000_000n, upstreamCostUsd: '0.0061' });
  return request;
}

/** The request's root span (a server span with GenAI and our attributes), parent of every other span. */
function expectRootSpan(spans: DecodedSpan[], traceId: string | undefined): void {
  const root = only(spans, 'chat gen-5.6-luna');
  expect(root.parentSpanId).toBe('');
  expect(root.traceId).toBe(traceId);
  expect(root.kind).toBe(SERVER);
  expect(root.status).toBe(UNSET);
  expect(root.attributes).toEqual({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gen-5.6-luna',
    'gen_ai.request.stream': true,
    'gen_ai.response.model': 'gen-5.6-luna',
    'gen_ai.usage.input_tokens': 1200,
    'gen_ai.usage.output_tokens': 34,
    'gen_ai.usage.cache_read.input_tokens': 1000,
    'gen_ai.usage.reasoning.output_tokens': 5,
    'http.route': '/v1/chat/completions',
    'http.response.status_code': 200,
    'baikal.request.id': 'req_trace_1',
    'baikal.operation': 'chat',
    'baikal.attempts': 2,
    'baikal.cost.amount_usd': 0.0123,
    'baikal.cost.upstream_usd': 0.0061,
  });

  for (const child of spans.filter((s) => s !== root)) {
    expect(child.traceId, child.name).toBe(root.traceId);
    expect(child.parentSpanId, child.name).toBe(root.spanId);
    expect(child.start, child.name).toBeGreaterThanOrEqual(root.start);
    expect(child.end, child.name).toBeLessThanOrEqual(root.end);
  }
  expect(new Set(spans.map((s) => s.spanId)).size).toBe(5);
}

/** The two attempts: client spans in order, the timed-out one an error with the failure's kind and Retry-After. */
function expectAttemptSpans(spans: DecodedSpan[]): void {
  const attempts = spans.filter((s) => s.name === 'baikal.upstream_attempt').sort((a, b) => Number(a.attributes['baikal.attempt.number']) - Number(b.attributes['baikal.attempt.number']));
  const [timedOut, answered] = attempts as [DecodedSpan, DecodedSpan];
  expect(timedOut.kind).toBe(CLIENT);
  expect(timedOut.status).toBe(ERROR);
  expect(timedOut.attributes).toEqual({
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'openai',
    'gen_ai.request.model': 'luna-large-2026',
    'gen_ai.request.stream': true,
    'server.address': 'alpha.example.net',
    'http.response.status_code': 504,
    'error.type': 'timeout',
    'baikal.upstream.id': 'alpha',
    'baikal.upstream.kind': 'openai-compatible',
    'baikal.upstream.credential': 'ALPHA_KEY',
    'baikal.upstream.retry_after_s': 7,
    'baikal.attempt.number': 1,
    'baikal.attempt.outcome': 'timeout',
  });
  expect(answered.kind).toBe(CLIENT);
  expect(answered.status).toBe(UNSET);
  expect(answered.attributes).toEqual({
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'anthropic',
    'gen_ai.request.model': 'claude-luna-5',
    'gen_ai.request.stream': true,
    'gen_ai.response.time_to_first_chunk': 0.25,
    'http.response.status_code': 200,
    'baikal.upstream.id': 'beta',
    'baikal.upstream.kind': 'anthropic',
    'baikal.upstream.credential': 'unrecognized',
    'baikal.upstream.first_byte_ms': 250,
    'baikal.attempt.number': 2,
    'baikal.attempt.outcome': 'ok',
  });
  expect(timedOut.end).toBeLessThanOrEqual(answered.start);
}

describe('traces over OTLP/HTTP', () => {
  it('exports a request with a failed and a successful attempt, GenAI attributes, and nothing it was not meant to', async () => {
    const receiver = await startReceiver();
    const { log, lines } = captureLog();
    const tracing = await tracingFor(
      { OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.endpoint}/`, OTEL_EXPORTER_OTLP_HEADERS: `x-collector-token=${COLLECTOR_TOKEN}%20v2`, OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test' },
      log,
    );
    expect(tracing.enabled).toBe(true);

    const request = recordTwoAttempts(tracing);
    await tracing.shutdown();

    expect(receiver.received.length).toBeGreaterThan(0);
    for (const r of receiver.received) {
      expect(r.path).toBe('/v1/traces');
      expect(r.headers['content-type']).toContain('application/json');
      expect(r.headers['x-collector-token']).toBe(`${COLLECTOR_TOKEN} v2`);
    }
    const { spans, resources, scopes } = decode(receiver.received);
    expect(spans.map((s) => s.name).sort()).toEqual(['baikal.admission', 'baikal.settlement', 'baikal.upstream_attempt', 'baikal.upstream_attempt', 'chat gen-5.6-luna']);
    expect(resources[0]).toMatchObject({ 'service.name': 'baikal', 'deployment.environment.name': 'test', 'telemetry.sdk.language': 'nodejs' });
    expect(new Set(scopes)).toEqual(new Set(['baikal']));

    expectRootSpan(spans, request.traceId);
    const stages = [only(spans, 'baikal.admission'), only(spans, 'baikal.settlement')];
    for (const stage of stages) {
      expect(stage.kind).toBe(INTERNAL);
      expect(stage.status).toBe(UNSET);
      expect(stage.attributes).toEqual({});
    }

    expectAttemptSpans(spans);

    // Nothing planted reached the collector, in any form; the collector's token went as a header only.
    for (const r of receiver.received) {
      expect(r.raw).not.toContain('CANARY');
      expect(r.raw).not.toContain('sk-ant');
      expect(r.raw).not.toContain(COLLECTOR_TOKEN);
      expect(JSON.stringify(r.headers)).not.toContain('CANARY');
    }
    expect(lines.map((l) => l.msg)).toEqual(['traces: exporting spans over OTLP/HTTP (JSON)']);
    expect(lines[0]).toMatchObject({ endpoint: `${receiver.endpoint}/v1/traces`, serviceName: 'baikal', sampler: expect.stringContaining('ParentBased') });
    expect(JSON.stringify(lines)).not.toContain(COLLECTOR_TOKEN);
  });

  it('marks failures: a refused admission (4xx: error.type, status unset) and an upstream error (5xx: status ERROR); free text becomes _OTHER', async () => {
    const receiver = await startReceiver();
    const tracing = await tracingFor({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/custom/traces`, OTEL_SERVICE_NAME: 'baikal-eu' });

    const refused = tracing.request({ requestId: 'req_refused', endpoint: '/v1/messages', operation: 'messages', model: 'claude-luna-5', stream: false });
    refused.admission().end('insufficient_balance');
    refused.end({ status: 402, errorCode: 'insufficient_balance', usage: null, amountUsd: null });

    const failed = tracing.request({ requestId: 'req_failed', endpoint: '/v1/images/generations', operation: 'images', model: 'pix-3', stream: false });
    failed.admission().end();
    failed.attempt({ upstreamId: 'gamma', kind: 'openai-compatible', upstreamModel: 'pix-3-hd' }).end({ outcome: 'server_error', status: 500 });
    failed.settlement().end(`upstream said: ${CANARY}`);
    failed.end({ status: 502, errorCode: `Upstream error: ${CANARY}`, usage: null, amountUsd: '0' });

    await tracing.shutdown();
    expect(receiver.received.every((r) => r.path === '/custom/traces')).toBe(true);
    const { spans, resources } = decode(receiver.received);
    expect(resources[0]).toMatchObject({ 'service.name': 'baikal-eu' });
    expect(spans).toHaveLength(6);

    const refusedRoot = only(spans, 'chat claude-luna-5');
    expect(refusedRoot.status).toBe(UNSET);
    expect(refusedRoot.attributes).toMatchObject({ 'error.type': 'insufficient_balance', 'http.response.status_code': 402, 'baikal.attempts': 0, 'gen_ai.request.stream': false });
    expect(refusedRoot.attributes).not.toHaveProperty('gen_ai.response.model');
    expect(refusedRoot.attributes).not.toHaveProperty('gen_ai.usage.input_tokens');
    expect(refusedRoot.attributes).not.toHaveProperty('baikal.cost.amount_usd');
    const refusedAdmission = spans.find((s) => s.name === 'baikal.admission' && s.parentSpanId === refusedRoot.spanId)!;
    expect(refusedAdmission.status).toBe(ERROR);
    expect(refusedAdmission.attributes).toEqual({ 'error.type': 'insufficient_balance' });

    const failedRoot = only(spans, 'images pix-3');
    expect(failedRoot.status).toBe(ERROR);
    expect(failedRoot.attributes).toMatchObject({ 'gen_ai.operation.name': 'images', 'error.type': '_OTHER', 'http.response.status_code': 502, 'baikal.cost.amount_usd': 0 });
    const attempt = only(spans, 'baikal.upstream_attempt');
    expect(attempt.parentSpanId).toBe(failedRoot.spanId);
    expect(attempt.status).toBe(ERROR);
    expect(attempt.attributes).toMatchObject({ 'error.type': 'server_error', 'gen_ai.operation.name': 'images', 'baikal.attempt.outcome': 'server_error' });
    expect(attempt.attributes).not.toHaveProperty('baikal.upstream.credential');
    const settlement = only(spans, 'baikal.settlement');
    expect(settlement.status).toBe(ERROR);
    expect(settlement.attributes).toEqual({ 'error.type': '_OTHER' });
    for (const r of receiver.received) expect(r.raw).not.toContain('CANARY');
  });

  it('logs a failing collector once, never throws into requests, and sums up the rest at shutdown', async () => {
    const receiver = await startReceiver(400);
    const { log, lines } = captureLog();
    const tracing = await tracingFor({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '10' }, log);
    for (let round = 1; round <= 3; round++) {
      const request = tracing.request({ ...CHAT_REQUEST, requestId: `req_fail_${round}` });
      request.admission().end();
      request.end({ status: 200, errorCode: null, usage: null, amountUsd: null });
      await expect.poll(() => receiver.received.length, { timeout: 5_000, interval: 10 }).toBe(round);
      // The exporter calls back after the response; give it a moment.
      await expect.poll(() => lines.filter((l) => l.msg !== 'traces: exporting spans over OTLP/HTTP (JSON)').length >= 1, { timeout: 5_000, interval: 10 }).toBe(true);
    }
    const failures = () => lines.filter((l) => l.msg === 'traces: export to the OTLP endpoint failed; spans lost');
    expect(failures()).toHaveLength(1);
    expect(failures()[0]).toMatchObject({ level: 40, failedExports: 1, lostSpans: 2 });
    await expect(tracing.shutdown()).resolves.toBeUndefined();
    expect(failures()).toHaveLength(2);
    expect(failures()[1]).toMatchObject({ failedExports: 2, lostSpans: 4 });
  });
});

describe('traces off', () => {
  it('without an endpoint: the shared no-op, no SDK, nothing to send', async () => {
    const { log, lines } = captureLog();
    const tracing = await createTracing({}, log);
    expect(tracing).toBe(NOOP_TRACING);
    expect(tracing.enabled).toBe(false);
    const request = tracing.request(CHAT_REQUEST);
    expect(request).toBe(NOOP_REQUEST_TRACE);
    expect(request.traceId).toBeUndefined();
    expect(request.admission()).toBe(request.admission());
    await expect(tracing.shutdown()).resolves.toBeUndefined();
    expect(lines).toEqual([]);
  });

  it.each([
    ['OTEL_SDK_DISABLED', { OTEL_SDK_DISABLED: 'true' }],
    ['OTEL_TRACES_EXPORTER=none', { OTEL_TRACES_EXPORTER: 'none' }],
  ])('with an endpoint but %s: nothing is sent', async (_name, extra) => {
    const receiver = await startReceiver();
    const { log, lines } = captureLog();
    const tracing = await tracingFor({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...extra }, log);
    expect(tracing).toBe(NOOP_TRACING);
    runFullTrace(tracing);
    await tracing.shutdown();
    expect(receiver.received).toEqual([]);
    expect(lines.map((l) => l.msg)).toEqual(['traces: off']);
  });

  it('with OTEL_TRACES_SAMPLER=always_off: the SDK runs, requests are not recorded, nothing is sent', async () => {
    const receiver = await startReceiver();
    const tracing = await tracingFor({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_SAMPLER: 'always_off' });
    expect(tracing.enabled).toBe(true);
    expect(tracing.request(CHAT_REQUEST)).toBe(NOOP_REQUEST_TRACE);
    runFullTrace(tracing);
    await tracing.shutdown();
    expect(receiver.received).toEqual([]);
  });

  it('measures a no-op request trace (printed, not asserted)', () => {
    const rounds = 2_000_000;
    for (let i = 0; i < 100_000; i++) runFullTrace(NOOP_TRACING);
    const started = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) runFullTrace(NOOP_TRACING);
    const ns = Number(process.hrtime.bigint() - started) / rounds;
    console.log(`[tracing] a whole no-op request trace (request, admission, 2 attempts, settlement, end): ${ns.toFixed(1)} ns`);
    expect(ns).toBeGreaterThan(0);
  });
});

/** What the pipeline will call for one request with a failover. */
function runFullTrace(tracing: Tracing): void {
  const request = tracing.request(CHAT_REQUEST);
  request.admission().end();
  request.attempt({ upstreamId: 'alpha', kind: 'openai-compatible', upstreamModel: 'luna-large-2026' }).end({ outcome: 'timeout' });
  request.attempt({ upstreamId: 'beta', kind: 'anthropic', upstreamModel: 'claude-luna-5' }).end({ outcome: 'ok', status: 200, firstByteMs: 40 });
  request.settlement().end();
  request.end({ status: 200, errorCode: null, usage: null, amountUsd: 1n });
}
