import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/inference/sse.js';
import { apiAccount, processAdmin, requestId, startInferenceStack, usageEventOf, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import { chatBody, eventsByRequest, leaks, METRICS_TOKEN, moneyReport, rawCall, sleep, tokenCost, waitIdle, type RawCallOptions, type RawResult } from '../helpers/reliability.js';
import { usageDebitOf } from '../helpers/ledger.js';
import { answerWords, promptTokensOf } from '../../src/simulator/openai-simulator.js';

/**
 * Issue 11, Faults, upstream: every way an upstream can fail before or during an answer, against the
 * gateway process and the two simulators (primary, and backup as its fallback; family b is served by
 * the primary alone, with no fallback). After each scenario: no slot or hold left, nothing leaked; at
 * the end, the money invariants over the whole database and one usage event per request.
 */
const LUNA = { input: '0.016', output: '0.04', cacheRead: '0.0016' };
const OPUS = { input: '0.35', output: '0.35', cacheRead: '0.035' };
const answer = (n: number) => answerWords(n).join(' ');

let stack: InferenceStack;
let chat: ApiAccount;
let messages: ApiAccount;
/** Every request id sent (all of them admitted: the accounts are funded and the limits never bind). */
const sent: string[] = [];
const faults: Record<string, number> = {};

beforeAll(async () => {
  // Each request here meets its own fault: breakers that opened on the earlier ones would hide the later ones'
  // handling (test/reliability/upstream-health.test.ts is about what routing learns across requests).
  stack = await startInferenceStack({ METRICS_TOKEN, STATUS_PROBE_SECONDS: '0' }, { upstream: { health: { minFailures: 10_000 } } });
  const admin = await processAdmin(stack);
  chat = await apiAccount(stack, admin, '5');
  messages = await apiAccount(stack, admin, '5', { provider_family: 'family_b' });
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

/** One call, recorded for the end-of-file checks; `fault` counts the injected faults by kind. */
async function call(fault: string | null, account: ApiAccount, body: object, options: RawCallOptions = {}): Promise<RawResult & { rid: string }> {
  const rid = requestId('upstream');
  sent.push(rid);
  if (fault) faults[fault] = (faults[fault] ?? 0) + 1;
  const result = await rawCall(stack.url, account.key, body, { requestId: rid, received: stack.received, ...options });
  return { ...result, rid };
}

const messagesBody = (prompt: string, stream = false) => ({ model: 'lm-opus-5', max_tokens: 200, messages: [{ role: 'user', content: prompt }], ...(stream ? { stream: true } : {}) });
const upstreamCalls = (marker: string) => ({
  primary: stack.primary.requests.filter((r) => JSON.stringify(r.body).includes(marker)).length,
  backup: stack.backup.requests.filter((r) => JSON.stringify(r.body).includes(marker)).length,
});

/** Nothing billed for this request: a zero event and no ledger row. */
async function expectUnbilled(rid: string, errorCode: string) {
  const event = await usageEventOf(stack, rid);
  expect(event).toMatchObject({ status: 'error', error_code: errorCode });
  expect(new Decimal(event.amount_usd).isZero()).toBe(true);
  expect(await usageDebitOf(stack.db, event.id)).toBeUndefined();
}
/** Billed exactly `amount`, once. */
async function expectBilled(rid: string, status: string, errorCode: string | null, amount: Decimal) {
  const event = await usageEventOf(stack, rid);
  expect(event).toMatchObject({ status, error_code: errorCode });
  expect(new Decimal(event.amount_usd).toFixed(10), rid).toBe(amount.toFixed(10));
  expect(await usageDebitOf(stack.db, event.id)).toMatchObject({ kind: 'usage' });
  return event;
}

describe('an upstream that never sends headers', () => {
  it('chat stream: both routes time out on the first byte, the client gets our 503 upstream_timeout, nothing is billed, the hold and slot are released', async () => {
    const marker = `hang-${Date.now()}`;
    const started = Date.now();
    const result = await call('no_headers', chat, chatBody(`${marker} [sim:hang]`, { stream: true }));
    const took = Date.now() - started;
    expect(result.status).toBe(503);
    expect(JSON.parse(result.text).error).toMatchObject({ code: 'upstream_timeout', type: expect.any(String) });
    expect(Number(result.headers.get('retry-after'))).toBeGreaterThan(0);
    // One try per route, each bounded by the route's first-byte timeout (1.5 s): the failover is bounded.
    expect(upstreamCalls(marker)).toEqual({ primary: 1, backup: 1 });
    expect(took).toBeGreaterThanOrEqual(2 * 1_500);
    expect(took).toBeLessThan(10_000);
    await expectUnbilled(result.rid, 'upstream_timeout');
    await waitIdle(stack.url);
  });

  it('messages (no fallback): our 503 in the Anthropic error shape', async () => {
    const result = await call('no_headers', messages, messagesBody('wait [sim:hang]', true), { path: '/v1/messages' });
    expect(result.status).toBe(503);
    expect(JSON.parse(result.text)).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
    await expectUnbilled(result.rid, 'upstream_timeout');
    await waitIdle(stack.url);
  });
});

describe('failures before the first byte', () => {
  const cases: [string, string][] = [
    ['upstream_500', 'status=500'],
    ['upstream_429', 'status=429'],
    ['connection_reset', 'reset'],
  ];

  it.each(cases)('%s on the primary only: one failover to the fallback, which answers; billed once at its usage', async (fault, directive) => {
    for (const stream of [false, true]) {
      const marker = `${fault}-${stream}-${Date.now()}`;
      const prompt = `${marker} [sim:words=6 ${directive} only=primary]`;
      const result = await call(fault, chat, chatBody(prompt, { stream }));
      expect(result.status).toBe(200);
      expect(stream ? result.content : JSON.parse(result.text).choices[0].message.content).toBe(answer(6));
      // A 429 pauses the primary for its retry-after (the simulator's: 1 s): the next request goes straight to the backup.
      expect(upstreamCalls(marker)).toEqual(fault === 'upstream_429' && stream ? { primary: 0, backup: 1 } : { primary: 1, backup: 1 });
      const event = await expectBilled(result.rid, 'success', null, tokenCost(LUNA, promptTokensOf([{ content: prompt }]), 6));
      expect(event.upstream_id).toBe(stack.canaries.upstreamIds[1]);
    }
    if (fault === 'upstream_429') await sleep(1_100);
    await waitIdle(stack.url);
  });

  it.each([
    ['upstream_500', 'status=500', 502, 'upstream_error'],
    ['upstream_429', 'status=429', 429, 'upstream_rate_limited'],
    ['connection_reset', 'reset', 502, 'upstream_error'],
  ] as const)('%s on every route: exactly one try each, then a clean error in our shape; nothing billed', async (fault, directive, status, code) => {
    for (const stream of [false, true]) {
      const marker = `${fault}-all-${stream}-${Date.now()}`;
      const result = await call(fault, chat, chatBody(`${marker} [sim:${directive}]`, { stream }));
      expect(result.status).toBe(status);
      const body = JSON.parse(result.text);
      expect(body.error).toMatchObject({ code, type: expect.any(String), param: null });
      expect(body.error.message).not.toMatch(/simulat|upstream [a-z]/i);
      // Both paused by their retry-after after the first request: the next one still tries each (the longest-failed first).
      expect(upstreamCalls(marker)).toEqual({ primary: 1, backup: 1 });
      await expectUnbilled(result.rid, code);
    }
    // The Anthropic-kind route has no fallback: one try, then our error in the Messages shape.
    const result = await call(fault, messages, messagesBody(`fail [sim:${directive}]`), { path: '/v1/messages' });
    expect(result.status).toBe(status);
    expect(JSON.parse(result.text)).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
    await expectUnbilled(result.rid, code);
    if (fault === 'upstream_429') await sleep(1_100);
    await waitIdle(stack.url);
  });
});

describe('a stream cut after k chunks', () => {
  it.each([0, 1, 5])('chat, k = %i: the client gets the k chunks and a final error event; one settlement for what was delivered; no hold left', async (k) => {
    const prompt = `cut k${k} [sim:words=20 cut-after=${k}]`;
    const result = await call('stream_cut', chat, chatBody(prompt, { stream: true }));
    expect(result.status).toBe(200);
    expect(result.content).toBe(k ? answer(k) : '');
    const last = result.frames.at(-1);
    expect(last).toMatchObject({ error: { code: 'stream_interrupted', type: 'server_error' } });
    expect(result.frames).not.toContain('[DONE]');
    const delivered = estimateTokens(result.content);
    const event = await expectBilled(result.rid, 'error', 'stream_interrupted', tokenCost(LUNA, estimateTokens(prompt), delivered));
    expect(event).toMatchObject({ completion_tokens: delivered, cache_read_tokens: null });
    expect((await eventsByRequest(stack.db, [result.rid])).get(result.rid)).toHaveLength(1);
    await waitIdle(stack.url);
  });

  it('messages (translated from the Anthropic upstream): the deltas, then an error event; billed for the delivered text', async () => {
    const prompt = 'cut messages [sim:words=20 cut-after=4]';
    const result = await call('stream_cut', messages, messagesBody(prompt, true), { path: '/v1/messages' });
    expect(result.status).toBe(200);
    expect(result.content).toBe(answer(4));
    expect(result.events.at(-1)).toBe('error');
    expect(result.frames.at(-1)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(result.events).not.toContain('message_stop');
    // No usage reached us before the cut: the prompt and the delivered text are counted (DESIGN.md: Streams settle).
    const event = await expectBilled(result.rid, 'error', 'stream_interrupted', tokenCost(OPUS, estimateTokens(prompt), estimateTokens(answer(4))));
    expect(event).toMatchObject({ completion_tokens: estimateTokens(answer(4)), cache_read_tokens: null });
    await waitIdle(stack.url);
  });
});

describe('slow chunks', () => {
  it('chunks 400 ms apart (inside the idle timeout) arrive intact and are billed exactly at the upstream usage', async () => {
    const prompt = 'slowly [sim:words=8 chunk-delay=400]';
    const result = await call('slow_chunks', chat, chatBody(prompt, { stream: true, includeUsage: true }));
    expect(result.status).toBe(200);
    expect(result.content).toBe(answer(8));
    expect(result.frames.at(-1)).toBe('[DONE]');
    expect(result.frames.find((f) => f.usage)?.usage).toMatchObject({ completion_tokens: 8 });
    await expectBilled(result.rid, 'success', null, tokenCost(LUNA, promptTokensOf([{ content: prompt }]), 8));
  });

  it('a gap longer than the idle timeout (3 s) ends the stream with our error event, billed for what was delivered', async () => {
    const prompt = 'stalls [sim:words=3 chunk-delay=3500]';
    const result = await call('stalled_stream', chat, chatBody(prompt, { stream: true }));
    expect(result.status).toBe(200);
    expect(result.frames.at(-1)).toMatchObject({ error: { code: 'stream_interrupted' } });
    expect(answer(3).startsWith(result.content)).toBe(true);
    await expectBilled(result.rid, 'error', 'stream_interrupted', tokenCost(LUNA, estimateTokens(prompt), estimateTokens(result.content)));
    await waitIdle(stack.url);
  }, 20_000);
});

describe('malformed answers from the upstream', () => {
  it('a JSON body cut in half: 502 upstream_error in our shape (no 500, no upstream text), nothing billed', async () => {
    const result = await call('bad_json', chat, chatBody('broken json [sim:bad-json]'));
    expect(result.status).toBe(502);
    expect(JSON.parse(result.text).error).toMatchObject({ code: 'upstream_error', type: expect.any(String) });
    await expectUnbilled(result.rid, 'upstream_error');

    const translated = await call('bad_json', messages, messagesBody('broken json [sim:bad-json]'), { path: '/v1/messages' });
    expect(translated.status).toBe(502);
    expect(JSON.parse(translated.text)).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
    await expectUnbilled(translated.rid, 'upstream_error');
    await waitIdle(stack.url);
  });

  it('a malformed SSE frame and no end of stream: the delivered text, then our error event; billed for what was delivered', async () => {
    const prompt = 'broken sse [sim:words=6 bad-sse]';
    const result = await call('bad_sse', chat, chatBody(prompt, { stream: true }));
    expect(result.status).toBe(200);
    expect(result.content).toBe(answer(6));
    expect(result.frames.some((f) => f.unparsed !== undefined)).toBe(false);
    expect(result.frames.at(-1)).toMatchObject({ error: { code: 'stream_interrupted' } });
    await expectBilled(result.rid, 'error', 'stream_interrupted', tokenCost(LUNA, estimateTokens(prompt), estimateTokens(answer(6))));

    const translated = await call('bad_sse', messages, messagesBody('broken sse [sim:words=6 bad-sse]', true), { path: '/v1/messages' });
    expect(translated.status).toBe(200);
    expect(translated.content).toBe(answer(6));
    expect(translated.events.at(-1)).toBe('error');
    expect(translated.frames.some((f) => f.unparsed !== undefined)).toBe(false);
    const event = await usageEventOf(stack, translated.rid);
    expect(event).toMatchObject({ status: 'error', error_code: 'stream_interrupted', completion_tokens: estimateTokens(answer(6)) });
    expect(new Decimal(event.amount_usd).greaterThan(0)).toBe(true);
    await waitIdle(stack.url);
  });

  it('a malformed frame in the middle of a stream that then completes: the frame is dropped, the rest is relayed, billed at the reported usage', async () => {
    const prompt = 'noisy sse [sim:words=6 bad-sse=mid]';
    const result = await call('bad_sse', chat, chatBody(prompt, { stream: true }));
    expect(result.status).toBe(200);
    expect(result.content).toBe(answer(6));
    expect(result.frames.at(-1)).toBe('[DONE]');
    expect(result.frames.some((f) => f.unparsed !== undefined || f.error)).toBe(false);
    await expectBilled(result.rid, 'success', null, tokenCost(LUNA, promptTokensOf([{ content: prompt }]), 6));

    const translated = await call('bad_sse', messages, messagesBody('noisy sse [sim:words=6 bad-sse=mid]', true), { path: '/v1/messages' });
    expect(translated.status).toBe(200);
    expect(translated.content).toBe(answer(6));
    expect(translated.events.at(-1)).toBe('message_stop');
    expect(await usageEventOf(stack, translated.rid)).toMatchObject({ status: 'success', completion_tokens: 6 });
    await waitIdle(stack.url);
  });
});

describe('after every upstream fault', () => {
  it('nothing private reached a client; one usage event per request; balance = ledger for every account', async () => {
    expect(leaks(stack.received, stack.canaries.all())).toEqual([]);
    const events = await eventsByRequest(stack.db, sent);
    expect(sent.filter((rid) => events.get(rid)?.length !== 1)).toEqual([]);
    const report = await moneyReport(stack.db);
    expect(report).toMatchObject({ balanceMismatches: [], settlementMismatches: [], duplicateRequests: [], expiredActiveHolds: 0 });
    expect(report.usageEvents).toBe(sent.length);
    await waitIdle(stack.url);
    console.log(`[reliability] upstream faults: ${sent.length} requests, faults injected ${JSON.stringify(faults)}, usage events ${report.usageEvents}, billed ${report.billedEvents}, lost 0, duplicated ${report.duplicateRequests.length}`);
  });
});
