import { randomBytes } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/inference/sse.js';
import { apiAccount, createKey, processAdmin, requestId, setKeyLimits, startInferenceStack, usageEventOf, type InferenceStack } from '../helpers/inference.js';
import { eventsByRequest, leaks, METRICS_TOKEN, moneyReport, rawCall, sleep, sseFrames, tokenCost, waitFor, waitIdle, type RawResult } from '../helpers/reliability.js';
import { answerWords, countTokens, promptTokensOf, type RecordedRequest } from '../../src/simulator/openai-simulator.js';

/**
 * Issue 11, Faults, client: clients that go away at random points of 1,000 streams, and clients that
 * read very slowly. Each request carries a unique marker in its prompt, so the simulator's record of
 * the upstream call (and when it ended) can be matched to what the client did.
 */
const TOTAL = Number(process.env.RELIABILITY_STREAMS ?? 1_000);
const CLIENTS = 24;
const SEED = Number(process.env.RELIABILITY_SEED ?? Date.now() % 1_000_000);
const LUNA = { input: '0.016', output: '0.04', cacheRead: '0.0016' };
const OPUS = { input: '0.35', output: '0.35', cacheRead: '0.035' };
const answer = (n: number) => answerWords(n).join(' ');

/** A small seeded PRNG (mulberry32), so a failing run can be replayed with RELIABILITY_SEED. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let stack: InferenceStack;
let admin: { token: string; userId: string };

beforeAll(async () => {
  stack = await startInferenceStack({ METRICS_TOKEN, STATUS_PROBE_SECONDS: '0' });
  admin = await processAdmin(stack);
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

type Plan = { kind: 'complete' } | { kind: 'before_headers'; afterMs: number } | { kind: 'after_frames'; frames: number };
interface Attempt {
  i: number;
  rid: string;
  marker: string;
  prompt: string;
  messages: boolean;
  words: number;
  plan: Plan;
  result: RawResult;
}

function upstreamOf(marker: string): RecordedRequest | undefined {
  return stack.primary.requests.find((r) => messageOf(r).includes(marker));
}
function messageOf(r: RecordedRequest): string {
  const content = r.body?.messages?.at(-1)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
}

type AbortKey = { key: string; keyId: string; messages: boolean };

/** 8 keys of 4 accounts (three chat accounts, one of family b for Messages), two keys each, no per-minute limit. */
async function abortKeys(): Promise<AbortKey[]> {
  const chatAccounts = await Promise.all([0, 1, 2].map(() => apiAccount(stack, admin, '20')));
  const messagesAccount = await apiAccount(stack, admin, '20', { provider_family: 'family_b' });
  const keys = [
    ...chatAccounts.map((a) => ({ key: a.key, keyId: a.keyId, messages: false })),
    { key: messagesAccount.key, keyId: messagesAccount.keyId, messages: true },
    ...(await Promise.all(chatAccounts.map((a) => createKey(stack, a.token)))).map((k) => ({ key: k.key, keyId: k.id, messages: false })),
    { ...(await createKey(stack, messagesAccount.token, { provider_family: 'family_b' })), messages: true },
  ].map((k) => ({ key: k.key, keyId: 'keyId' in k ? k.keyId : (k as { id: string }).id, messages: k.messages }));
  // The per-minute window is not under test here (1,000 requests in well under a minute on 8 keys).
  for (const k of keys) await setKeyLimits(stack, admin, k.keyId, { rpmLimit: 100_000 });
  return keys;
}

/** TOTAL streams from CLIENTS clients at once, each with a random plan: read it all, leave before the headers, or after k frames. */
async function streamAndLeave(keys: AbortKey[], random: () => number): Promise<Attempt[]> {
  const tag = randomBytes(4).toString('hex');
  const attempts: Attempt[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, worker) => {
      const key = keys[worker % keys.length]!;
      for (let i = next++; i < TOTAL; i = next++) {
        const words = 4 + Math.floor(random() * 40);
        const roll = random();
        const plan: Plan =
          roll < 0.15 ? { kind: 'complete' } : roll < 0.35 ? { kind: 'before_headers', afterMs: 30 + Math.floor(random() * 150) } : { kind: 'after_frames', frames: Math.floor(random() * (words + 3)) };
        const latency = plan.kind === 'before_headers' ? 400 : 0;
        const marker = `r${i}-${tag}`;
        const prompt = `${marker} [sim:words=${words} chunk-delay=${5 + Math.floor(random() * 15)} latency=${latency}]`;
        const rid = requestId(`abort${i}`);
        const body = key.messages
          ? { model: 'lm-opus-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: prompt }] }
          : { model: 'gen-5.6-luna', max_tokens: 100, stream: true, messages: [{ role: 'user', content: prompt }] };
        const result = await rawCall(stack.url, key.key, body, {
          path: key.messages ? '/v1/messages' : '/v1/chat/completions',
          requestId: rid,
          received: stack.received,
          ...(plan.kind === 'before_headers' ? { abortAfterMs: plan.afterMs } : plan.kind === 'after_frames' ? { abortAfterFrames: plan.frames } : {}),
        });
        attempts.push({ i, rid, marker, prompt, messages: key.messages, words, plan, result });
      }
    }),
  );
  return attempts;
}

/** The upstream call of every client that left was cancelled within 1 s (or had already ended). */
async function expectUpstreamsCancelled(aborted: Attempt[], forwarded: Attempt[]): Promise<{ cancelDelays: number[]; upstreamCancelled: number }> {
  await waitFor('every upstream call to end', () => forwarded.every((a) => upstreamOf(a.marker)!.endedAt !== undefined), 5_000);
  const cancelDelays = aborted.flatMap((a) => {
    const upstream = upstreamOf(a.marker);
    return upstream ? [Math.max(0, upstream.endedAt! - a.result.abortedAt!)] : [];
  });
  const slowCancels = aborted.filter((a) => {
    const upstream = upstreamOf(a.marker);
    return upstream && upstream.endedAt! - a.result.abortedAt! >= 1_000;
  });
  expect(slowCancels.map((a) => ({ i: a.i, plan: a.plan, delayMs: upstreamOf(a.marker)!.endedAt! - a.result.abortedAt!, upstreamAborted: upstreamOf(a.marker)!.aborted }))).toEqual([]);
  return { cancelDelays, upstreamCancelled: aborted.filter((a) => upstreamOf(a.marker)?.aborted).length };
}

/** Settled exactly once, completed streams billed exactly, nothing delivered left unbilled; answers the events and the unbilled. */
async function expectSettledOnce(attempts: Attempt[], forwarded: Attempt[], aborted: Attempt[]) {
  // Every request that reached an upstream has one usage event; none has two.
  await waitFor('usage events of every forwarded request', async () => {
    const [{ n }] = (await stack.db.query<{ n: number }>('select count(*)::int n from usage_events where request_id = any($1)', [forwarded.map((a) => a.rid)])) as [{ n: number }];
    return n >= forwarded.length;
  });
  const events = await eventsByRequest(stack.db, attempts.map((a) => a.rid));
  expect(attempts.filter((a) => (events.get(a.rid)?.length ?? 0) > 1).map((a) => a.rid)).toEqual([]);
  expect(forwarded.filter((a) => events.get(a.rid)?.length !== 1).map((a) => a.rid)).toEqual([]);
  // A request that left before the gateway forwarded it may have no event only if it was never admitted.
  const unforwardedWithEvent = attempts.filter((a) => !upstreamOf(a.marker) && events.has(a.rid));
  for (const a of unforwardedWithEvent) expect(events.get(a.rid)![0]).toMatchObject({ status: 'cancelled', amount_usd: expect.anything() });

  // Completed streams: the whole answer, billed exactly at the upstream's usage.
  for (const a of attempts.filter((x) => x.plan.kind === 'complete')) {
    const event = events.get(a.rid)![0]!;
    expect(a.result.content, a.rid).toBe(answer(a.words));
    expect(event).toMatchObject({ status: 'success', completion_tokens: a.words });
    expect(new Decimal(event.amount_usd).toFixed(10), a.rid).toBe(tokenCost(a.messages ? OPUS : LUNA, promptTokensOf([{ content: a.prompt }]), a.words).toFixed(10));
  }
  // Clients that got tokens pay at least for what they got, never nothing.
  const delivered = attempts.filter((a) => a.result.content.length > 0);
  const unbilled = delivered.filter((a) => {
    const event = events.get(a.rid)?.[0];
    return !event || !(new Decimal(event.amount_usd).greaterThan(0) && event.completion_tokens >= countTokens(a.result.content));
  });
  expect(unbilled.map((a) => ({ rid: a.rid, got: a.result.content, event: events.get(a.rid)?.[0] }))).toEqual([]);
  // And each event is in a state that matches what happened to its client.
  for (const a of aborted) {
    const event = events.get(a.rid)?.[0];
    if (event) expect(['cancelled', 'success'], a.rid).toContain(event.status);
  }
  return { events, unbilled };
}

describe('clients that disconnect at random points', () => {
  it(`${TOTAL} streams over 8 keys of 4 accounts, ${CLIENTS} at a time: upstream cancelled within 1 s, slots back to zero within 5 s, each request settled once, nothing delivered left unbilled`, async () => {
    const random = prng(SEED);
    const keys = await abortKeys();
    const startedAt = Date.now();
    const attempts = await streamAndLeave(keys, random);
    const clientsDoneAt = Date.now();

    // Slots and holds: back to zero within 5 s of the last client.
    const idleAfter = await waitIdle(stack.url, 5_000);

    // Every client got a 200 stream or went away before the response: no limit, no 5xx.
    expect(attempts.filter((a) => a.result.status !== 200 && !(a.result.status === 0 && a.result.abortedAt))).toEqual([]);
    expect(attempts.filter((a) => a.result.error).map((a) => a.result.error)).toEqual([]);

    const aborted = attempts.filter((a) => a.result.abortedAt !== undefined);
    const forwarded = attempts.filter((a) => upstreamOf(a.marker));
    const { cancelDelays, upstreamCancelled } = await expectUpstreamsCancelled(aborted, forwarded);
    const { events, unbilled } = await expectSettledOnce(attempts, forwarded, aborted);

    const report = await moneyReport(stack.db);
    expect(report).toMatchObject({ balanceMismatches: [], settlementMismatches: [], duplicateRequests: [], expiredActiveHolds: 0 });
    expect(leaks(stack.received, stack.canaries.all())).toEqual([]);
    const counts = { complete: 0, before_headers: 0, after_frames: 0 } as Record<Plan['kind'], number>;
    for (const a of attempts) counts[a.plan.kind] += 1;
    console.log(
      `[reliability] client aborts (seed ${SEED}): ${attempts.length} streams in ${clientsDoneAt - startedAt} ms (${JSON.stringify(counts)}), ` +
        `aborted ${aborted.length}, forwarded ${forwarded.length}, upstream calls cancelled ${upstreamCancelled}, max cancel delay ${Math.max(0, ...cancelDelays)} ms, ` +
        `slots and holds at zero ${idleAfter} ms after the last client, usage events ${[...events.values()].length}, duplicated 0, delivered-but-unbilled ${unbilled.length}`,
    );
  }, 120_000);
});

describe('slow readers', () => {
  it('a client that reads very slowly (and stops reading for longer than the upstream idle timeout) gets an intact stream and does not slow other clients; it pays for what it got', async () => {
    const slow = await apiAccount(stack, admin, '20');
    const others = await apiAccount(stack, admin, '20');
    await setKeyLimits(stack, admin, others.keyId, { rpmLimit: 100_000 });
    const words = 300_000;
    const prompt = `slow reader ${randomBytes(4).toString('hex')} [sim:words=${words}]`;
    const rid = requestId('slow-reader');
    const response = await fetch(`${stack.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${slow.key}`, 'content-type': 'application/json', 'x-request-id': rid },
      body: JSON.stringify({ model: 'gen-5.6-luna', stream: true, messages: [{ role: 'user', content: prompt }] }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readFor = async (ms: number, gapMs: number) => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        const { done, value } = await reader.read();
        if (done) throw new Error('the slow stream ended early');
        text += decoder.decode(value, { stream: true });
        await sleep(gapMs);
      }
    };

    // Meanwhile, other clients: short requests whose latency must stay normal.
    const latencies: number[] = [];
    const othersDone = (async () => {
      for (let i = 0; i < 40; i++) {
        const t0 = Date.now();
        const r = await rawCall(stack.url, others.key, { model: 'gen-5.6-luna', stream: true, messages: [{ role: 'user', content: 'quick [sim:words=5]' }] });
        latencies.push(Date.now() - t0);
        expect(r.content).toBe(answer(5));
        await sleep(100);
      }
    })();
    await readFor(1_500, 50);
    // Stop reading for 4 s: longer than the upstream's idle timeout (3 s). Backpressure has paused the upstream meanwhile.
    await sleep(4_000);
    await readFor(1_500, 50);
    await othersDone;
    const abortedAt = Date.now();
    await reader.cancel();

    // What it got is an intact prefix of the answer: no error frame, nothing lost in the middle.
    const frames = sseFrames(text.slice(0, text.lastIndexOf('\n\n') + 2));
    expect(frames.some((f) => f.data?.error)).toBe(false);
    const got = frames.map((f) => f.data?.choices?.[0]?.delta?.content ?? '').join('');
    expect(answer(words).startsWith(got)).toBe(true);
    const gotWords = countTokens(got);
    expect(gotWords).toBeGreaterThan(0);

    const upstream = await waitFor('the slow upstream call to end', () => stack.primary.requests.find((r) => messageOf(r) === prompt && r.endedAt !== undefined));
    expect(upstream.aborted).toBe(true);
    const event = await usageEventOf(stack, rid);
    expect(event).toMatchObject({ status: 'cancelled', error_code: 'client_closed' });
    // The gateway ends the request (having cancelled its upstream call) within 1 s of the client's cancel (about
    // 15 ms alone); the simulator, in this busy test process, sees its connection end within 2 s (about 120 ms
    // alone, 1,012 ms once in a loaded CI run). Not cancelled, the call (300,000 words held back by backpressure) would not end.
    expect(new Date(event.completed_at).getTime() - abortedAt).toBeLessThan(1_000);
    expect(upstream.endedAt! - abortedAt).toBeLessThan(2_000);
    // Billed for what it was sent: at least what it read, at most that plus what the socket buffers held,
    // and far below the whole answer (the gateway did not read the upstream ahead of the client).
    expect(event.completion_tokens).toBeGreaterThanOrEqual(gotWords);
    const bufferedTokens = event.completion_tokens - estimateTokens(got);
    expect(event.completion_tokens).toBeLessThan(words / 2);
    expect(new Decimal(event.amount_usd).equals(tokenCost(LUNA, estimateTokens(prompt), event.completion_tokens))).toBe(true);

    latencies.sort((a, b) => a - b);
    const p95 = latencies[Math.floor(latencies.length * 0.95)]!;
    expect(p95).toBeLessThan(2_000);
    await waitIdle(stack.url);
    console.log(`[reliability] slow reader: read ${gotWords} words in 7 s with a 4 s stall, billed ${event.completion_tokens} tokens (about ${bufferedTokens} in socket buffers), other clients p95 ${p95} ms over ${latencies.length} requests`);
  }, 60_000);

  it('a slow reader of a whole stream gets every byte and pays exactly the upstream usage', async () => {
    const slow = await apiAccount(stack, admin, '20');
    const words = 3_000;
    const prompt = `slow whole ${randomBytes(4).toString('hex')} [sim:words=${words}]`;
    const rid = requestId('slow-whole');
    const result = await rawCall(stack.url, slow.key, { model: 'gen-5.6-luna', stream: true, max_tokens: words, messages: [{ role: 'user', content: prompt }] }, { requestId: rid, readDelayMs: 5 });
    expect(result.content).toBe(answer(words));
    expect(result.frames.at(-1)).toBe('[DONE]');
    const event = await usageEventOf(stack, rid);
    expect(event).toMatchObject({ status: 'success', completion_tokens: words });
    expect(new Decimal(event.amount_usd).equals(tokenCost(LUNA, promptTokensOf([{ content: prompt }]), words))).toBe(true);
    const report = await moneyReport(stack.db);
    expect(report).toMatchObject({ balanceMismatches: [], settlementMismatches: [], duplicateRequests: [], expiredActiveHolds: 0 });
  }, 30_000);
});
