import { randomBytes } from 'node:crypto';
import { print } from 'graphql';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionEventsDocument, SetModelPricesDocument, type SessionEventsSubscription } from '../graphql/generated.js';
import { graphql, http, registerRest } from '../helpers/clients.js';
import { Decimal } from 'decimal.js';
import { promptTokenBound } from '../../src/inference/canonical.js';
import { chatToCanonical, parseChatRequest } from '../../src/inference/formats/openai-chat/request.js';
import { ledgerBalance } from '../helpers/accounts.js';
import { apiAccount, createKey, fund, processAdmin, requestId, setAccountLimits, setKeyLimits, settled, startInferenceStack, usageEventOf, type InferenceStack } from '../helpers/inference.js';
import type { ServerProcess } from '../helpers/process.js';
import { clusterRedis, sharedRedis, type TestRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/reliability.js';

/**
 * Two gateway processes on one PostgreSQL and one Redis (the scale-out issue): every limit, cache
 * and subscription holds across both. The same suite runs on a Redis Cluster of its own (issue 55): every
 * account's keys in one hash slot, account events over sharded pub/sub.
 */
const PREFIX = `baikal-e2e:${randomBytes(6).toString('hex')}:`;
const LEASE_SECONDS = 2;
const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;
const MODEL = 'gen-5.6-luna';
const MAX_TOKENS = 16;
const SLOW_PROMPT = 'Count slowly [sim:words=10 latency=800]';

/** What the gateway holds for one request: every prompt byte as a token at luna's dearest input-side price, plus max_tokens of output. */
function worstCaseHold(prompt: string): Decimal {
  const bound = promptTokenBound(chatToCanonical(parseChatRequest({ model: MODEL, messages: [{ role: 'user', content: prompt }], max_tokens: MAX_TOKENS })));
  return new Decimal(bound).times('0.018').plus(new Decimal(MAX_TOKENS).times('0.04')).dividedBy(1_000_000).toDecimalPlaces(10, Decimal.ROUND_UP);
}

let stack: InferenceStack;
let b: ServerProcess;
let admin: { token: string; userId: string };

let redis: TestRedis;

/** One chat completion by plain fetch (no client retries): the status and our error code. */
async function chat(url: string, key: string, prompt = 'hello', id = requestId('scale')): Promise<{ status: number; code: string | null; id: string }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: prompt }] }),
  });
  const text = await response.text();
  const body = JSON.parse(text) as { error?: { code: string } };
  if (response.status >= 500 && !body.error?.code) throw new Error(`unexpected ${response.status}: ${text}`);
  return { status: response.status, code: body.error?.code ?? null, id };
}

/** Opens a paced stream; resolves once admitted (200) or refused, with `finished` for the rest of the stream. */
async function openStream(url: string, key: string): Promise<{ status: number; code: string | null; finished: Promise<unknown> }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'hold on [sim:words=30 chunk-delay=100]' }] }),
  });
  if (response.status === 200) return { status: 200, code: null, finished: response.text() };
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code ?? 'no code', finished: Promise.resolve() };
}

const count = (results: { code: string | null; status: number }[], code: string | null) => results.filter((r) => r.code === code).length;
const both = () => [stack.url, b.url];

describe.each([
  { on: 'one Redis', start: sharedRedis },
  { on: 'a Redis Cluster (3 masters, 3 replicas)', start: clusterRedis },
])('two gateway processes sharing $on', ({ start }) => {
  beforeAll(async () => {
    redis = await start();
    stack = await startInferenceStack({ REDIS_URL: redis.url, REDIS_PREFIX: PREFIX, SLOT_LEASE_SECONDS: String(LEASE_SECONDS), STATUS_PROBE_SECONDS: '0', METRICS_TOKEN, WORKERS: '1' });
    b = await stack.spawnPeer();
    admin = await processAdmin(stack);
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
    await redis?.close(PREFIX);
  });

  it('admits exactly 120 of 300 requests in a minute on one key spread over both', async () => {
    const account = await apiAccount(stack, admin, '50');
    const results: { status: number; code: string | null }[] = [];
    // Waves of 6 keep the concurrency limits out of it: this is the per-minute window alone.
    for (let i = 0; i < 300; i += 6) results.push(...(await Promise.all(Array.from({ length: 6 }, (_, j) => chat(both()[(i + j) % 2]!, account.key)))));
    expect(count(results, null)).toBe(120);
    expect(count(results, 'rate_limited')).toBe(180);
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
  }, 120_000);

  it('holds 8 concurrent requests per key, 16 per account and 48 overall across both', async () => {
    const account = await apiAccount(stack, admin, '50');
    // Admitted requests stream for ~3 s, so every attempt is judged while the admitted ones still hold their slots.
    const perKey = await Promise.all(Array.from({ length: 20 }, (_, i) => openStream(both()[i % 2]!, account.key)));
    expect(count(perKey, null)).toBe(8);
    expect(count(perKey, 'concurrency_limited')).toBe(12);
    await Promise.all(perKey.map((r) => r.finished));

    // 3 keys x 8 of one account: each key is within its own limit, the account's 16 admits 16.
    const accountKeys = [account.key, ...(await Promise.all([1, 2].map(async () => (await createKey(stack, account.token)).key)))];
    const perAccount = await Promise.all(accountKeys.flatMap((key, k) => Array.from({ length: 8 }, (_, i) => openStream(both()[(k + i) % 2]!, key))));
    expect(count(perAccount, null)).toBe(16);
    expect(count(perAccount, 'account_concurrency_limited')).toBe(8);
    await Promise.all(perAccount.map((r) => r.finished));

    // 7 accounts x 8 = 56 at once: the global limit of 48 admits 48 wherever they land.
    const keys = [account.key, ...(await Promise.all(Array.from({ length: 6 }, async () => (await apiAccount(stack, admin, '50')).key)))];
    const overall = await Promise.all(keys.flatMap((key, k) => Array.from({ length: 8 }, (_, i) => openStream(both()[(k + i) % 2]!, key))));
    expect(count(overall, null)).toBe(48);
    expect(count(overall, 'capacity_limited')).toBe(8);
    await Promise.all(overall.map((r) => r.finished));
  }, 90_000);

  it('a small balance is held across both processes: they never spend more than it, and the ledger equals the balance', async () => {
    const owner = await apiAccount(stack, admin, null);
    // 100 at once from one account: the balance, not the account's concurrency limit, is what refuses here.
    await setAccountLimits(stack, admin, owner.userId, { concurrencyLimit: 100 });
    const keys = [owner.key, ...(await Promise.all(Array.from({ length: 12 }, () => createKey(stack, owner.token)))).map((k) => k.key)];
    const hold = worstCaseHold(SLOW_PROMPT);
    const start = hold.times(30.5).toDecimalPlaces(10, Decimal.ROUND_DOWN);
    await fund(stack, admin, owner.userId, start.toFixed());
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => chat(both()[i % 2]!, keys[i % keys.length]!, SLOW_PROMPT)));
    const admitted = count(results, null);
    // On a cluster each process admits up to its share of the gateway's 48 (24 here), after the money: one that the
    // balance admits past its share is refused for capacity, and its hold goes back (src/inference/shared-limits.ts).
    const expected = redis.cluster ? ['insufficient_balance', 'capacity_limited'] : ['insufficient_balance'];
    expect(results.filter((r) => r.code !== null && !expected.includes(r.code))).toEqual([]);
    // Each process alone would admit up to 30 on its own copy of the balance; together they may not.
    expect(admitted).toBeGreaterThanOrEqual(redis.cluster ? 24 : 30);
    expect(admitted).toBeLessThanOrEqual(36);
    // A refusal by the money is recorded as a failed usage event; one by a limit is not.
    await settled(stack, owner.userId, 100 - count(results, 'capacity_limited'));
    const each = await Promise.all(results.filter((r) => r.code === null).map(async (r) => new Decimal((await usageEventOf(stack, r.id)).amount_usd as string)));
    const spent = each.reduce((sum, amount) => sum.plus(amount), new Decimal(0));
    const balance = await ledgerBalance(stack, owner.userId);
    expect(new Decimal(balance.balance).equals(start.minus(spent))).toBe(true);
    expect(new Decimal(balance.balance).isNegative()).toBe(false);
    expect(balance.ledger).toBe(balance.balance);
  }, 60_000);

  it('a key’s monthly spend cap holds across both processes', async () => {
    const account = await apiAccount(stack, admin, '5');
    const hold = worstCaseHold(SLOW_PROMPT);
    await setKeyLimits(stack, admin, account.keyId, { monthlySpendCap: hold.times(2.5).toDecimalPlaces(10, Decimal.ROUND_DOWN).toFixed() });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(both()[i % 2]!, account.key, SLOW_PROMPT)));
    expect(count(results, null) + count(results, 'spend_cap_reached')).toBe(8);
    // Two fit at once; a straggler may fit after they settled below their holds, never more.
    expect(count(results, null)).toBeGreaterThanOrEqual(2);
    expect(count(results, null)).toBeLessThanOrEqual(3);
  }, 30_000);

  it('without Redis a process refuses billable requests with 503 (never 401, never unchecked), and says so on /ready', async () => {
    const lonely = await stack.spawnPeer({ REDIS_URL: 'redis://127.0.0.1:1' });
    const account = await apiAccount(stack, admin, '5');
    const refused = await chat(lonely.url, account.key);
    expect(refused).toMatchObject({ status: 503, code: 'billing_unavailable' });
    const models = await http(lonely.url, 'GET', '/v1/models', { headers: { authorization: `Bearer ${account.key}` } });
    expect(models.status).toBe(200);
    const ready = await http(lonely.url, 'GET', '/ready');
    expect(ready.body).toMatchObject({ redis: 'unreachable' });
    lonely.child.kill('SIGTERM');
    expect(await lonely.exited).toBe(0);
  }, 30_000);

  it('a key revoked on one process is refused on the other at once', async () => {
    const account = await apiAccount(stack, admin, '5');
    expect((await chat(b.url, account.key)).status).toBe(200); // now cached on b
    const revoked = await http(stack.url, 'DELETE', `/keys/${account.keyId}`, { token: account.token });
    expect(revoked.status).toBe(204);
    const refused = await chat(b.url, account.key);
    expect(refused.status).toBe(401);
  });

  it('a price changed on one process bills at the new price on the other', async () => {
    const account = await apiAccount(stack, admin, '5');
    expect((await chat(b.url, account.key)).status).toBe(200); // b has served this model at the old price
    const changed = await graphql(stack.url, SetModelPricesDocument, { modelId: MODEL, group: 'cheap', prices: { tokens: { input: '7.5', output: '9.25' } } }, admin.token);
    expect(changed.errors).toBeUndefined();
    // The change reaches the other process over the Redis bus, a moment after the mutation answered (a request
    // there may arrive first): wait until its public catalog shows the new price, then bill there.
    await waitFor('the new price on the other process', async () => (await http(b.url, 'GET', '/catalog/models')).text.includes('"9.25"'), 10_000);
    const billed = await chat(b.url, account.key);
    expect(billed.status).toBe(200);
    const event = await usageEventOf(stack, billed.id);
    expect(Number(event.public_input_usd_per_1m)).toBe(7.5);
    expect(Number(event.public_output_usd_per_1m)).toBe(9.25);
  });

  it('sign-in guesses are counted across both processes: five wrong spread over them, then both refuse even the right password', async () => {
    const account = await registerRest(stack.url);
    const attempt = (url: string, password: string) => http(url, 'POST', '/auth/login', { body: { login: account.input.username, password } });
    // Five in parallel, alternating processes: each is counted before its password is checked.
    const guesses = await Promise.all([0, 1, 2, 3, 4].map((i) => attempt(i % 2 ? b.url : stack.url, `wrong-guess-${i}`)));
    expect(guesses.map((g) => g.status)).toEqual([401, 401, 401, 401, 401]);
    for (const url of [stack.url, b.url]) {
      const refused = await attempt(url, account.input.password);
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('login_throttled');
    }
    // Nothing about the login in Redis is readable text.
    const keys = await redis.keys(`${PREFIX}attempts:*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(' ')).not.toContain(account.input.username);
  });

  it('a subscriber on one process receives an event published on the other', async () => {
    const account = await apiAccount(stack, admin, null);
    const client = createClient({ url: stack.url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, connectionParams: { sessionToken: account.token }, retryAttempts: 0, lazy: true });
    try {
      const iterator = client.iterate<SessionEventsSubscription>({ query: print(SessionEventsDocument) });
      const first = iterator.next();
      await new Promise((resolve) => setTimeout(resolve, 300)); // subscription registered on the first process
      // Signing out on the second process publishes there.
      const out = await http(b.url, 'POST', '/auth/logout', { token: account.token });
      expect(out.status).toBeLessThan(300);
      const step = await Promise.race([first, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no event within 5 s')), 5_000))]);
      expect(step.done).toBe(false);
      expect(step.value!.data!.sessionEvents.kind).toBe('SIGNED_OUT');
      await iterator.return?.();
    } finally {
      await client.dispose();
    }
  });

  it('slots of a process killed with SIGKILL are free again within their lease', async () => {
    const c = await stack.spawnPeer();
    const account = await apiAccount(stack, admin, '5');
    // Long paced streams hold their slots (well inside the upstream timeouts) until the process dies.
    const inFlight = Array.from({ length: 8 }, () =>
      fetch(`${c.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, stream: true, max_tokens: 400, messages: [{ role: 'user', content: 'held [sim:words=150 chunk-delay=100]' }] }),
      }).then((response) => response.text()).catch((error: unknown) => String(error)),
    );
    // Wait until all 8 hold their leases in Redis (a fresh process under load takes a moment): a request's hold is
    // its slot, counted per key in the account's hash (src/billing/shared-wallet-scripts.ts).
    for (let tries = 0; Number(await redis.hget(`${PREFIX}{acct:${account.userId}}`, `kn:${account.keyId}`)) < 8; tries++) {
      if (tries > 100) throw new Error(`the 8 slow requests were never admitted: ${JSON.stringify(await Promise.all(inFlight))}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await chat(stack.url, account.key)).toMatchObject({ status: 429, code: 'concurrency_limited' });
    // C's balance holds are seen from A too.
    const me = async () => (await http(stack.url, 'GET', '/v1/me', { headers: { authorization: `Bearer ${account.key}` } })).body as { balance_usd: string; available_usd: string };
    const before = await me();
    expect(new Decimal(before.available_usd).lessThan(before.balance_usd)).toBe(true);
    const killedAt = Date.now();
    c.child.kill('SIGKILL');
    await c.exited;
    await Promise.all(inFlight);
    let freedAfterMs = -1;
    while (Date.now() - killedAt < (LEASE_SECONDS + 2) * 1000) {
      const attempt = await chat(stack.url, account.key);
      if (attempt.status === 200) {
        freedAfterMs = Date.now() - killedAt;
        break;
      }
      expect(attempt).toMatchObject({ status: 429, code: 'concurrency_limited' });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(freedAfterMs).toBeGreaterThanOrEqual(0);
    expect(freedAfterMs).toBeLessThanOrEqual(LEASE_SECONDS * 1000 + 500);
    // Its balance holds were leased too: nothing of the dead process's is held any more.
    for (let tries = 0; ; tries++) {
      const now = await me();
      if (now.available_usd === now.balance_usd) break;
      if (Date.now() - killedAt > LEASE_SECONDS * 1000 + 1_000) throw new Error(`holds of the killed process still count: ${JSON.stringify(now)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 30_000);

  it('WORKERS=2 runs two worker processes on one port that serve and drain', async () => {
    const cluster = await stack.spawnPeer({ WORKERS: '2' });
    // A worker answers 503 until it is ready; wait for both before sending traffic.
    for (let tries = 0; cluster.lines.filter((line) => line.includes('gateway ready')).length < 2; tries++) {
      if (tries > 200) throw new Error(`the second worker never became ready:\n${cluster.lines.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const account = await apiAccount(stack, admin, '5');
    const results = await Promise.all(Array.from({ length: 6 }, () => chat(cluster.url, account.key)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    // The primary and each worker log their start with their pid.
    const pids = new Set(cluster.lines.filter((line) => line.includes('Baikal gateway starting')).map((line) => (JSON.parse(line) as { pid: number }).pid));
    expect(pids.size).toBe(3);
    // One scrape, through whichever worker takes it, counts the requests of both.
    const scraped = await (await fetch(`${cluster.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const served = scraped.split('\n').find((line) => line.startsWith('baikal_requests_total{endpoint="/v1/chat/completions",model="gen-5.6-luna",status="success"'));
    expect(Number(served?.split(' ').pop())).toBe(6);
    expect(cluster.lines.some((line) => line.includes('cluster primary started 2 workers'))).toBe(true);
    cluster.child.kill('SIGTERM');
    expect(await cluster.exited).toBe(0);
  }, 60_000);

  it('serves Prometheus metrics to the operator only', async () => {
    expect((await http(b.url, 'GET', '/metrics')).status).toBe(401);
    const account = await apiAccount(stack, admin, '5');
    expect((await http(b.url, 'GET', '/metrics', { token: account.token })).status).toBe(401);
    expect((await http(b.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${account.key}` } })).status).toBe(401);
    await chat(b.url, account.key);
    await chat(b.url, account.key, '[sim:status=500] fail');
    const scraped = await fetch(`${b.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toContain('text/plain');
    const text = await scraped.text();
    const value = (pattern: RegExp) => {
      const line = text.split('\n').find((l) => pattern.test(l));
      if (!line) throw new Error(`no metric matches ${pattern}:\n${text.split('\n').filter((l) => l.startsWith('baikal_') && !l.includes('_bucket')).join('\n')}`);
      return Number(line.split(' ').pop());
    };
    expect(value(/^baikal_requests_total\{endpoint="\/v1\/chat\/completions",model="gen-5\.6-luna",status="success",error_code=""\}/)).toBeGreaterThanOrEqual(1);
    expect(value(/^baikal_time_to_first_byte_seconds_count\{endpoint="\/v1\/chat\/completions",model="gen-5\.6-luna"\}/)).toBeGreaterThanOrEqual(1);
    expect(value(/^baikal_upstream_errors_total\{upstream="canary-primary-/)).toBeGreaterThanOrEqual(1);
    expect(value(/^baikal_limit_refusals_total\{reason="rate_limited"\}/)).toBeGreaterThanOrEqual(1);
    expect(value(/^baikal_redis_up /)).toBe(1);
    expect(value(/^baikal_database_up /)).toBe(1);
    expect(text).toContain('baikal_process_resident_memory_bytes');
    // The event-loop delay while serving (src/metrics.ts), in place of prom-client's always-running monitor.
    expect(value(/^baikal_nodejs_eventloop_lag_p99_seconds /)).toBeGreaterThanOrEqual(0);
    expect(text.split('\n').filter((line) => line.startsWith('baikal_nodejs_eventloop_lag_max_seconds '))).toHaveLength(1);
  });

  it('a graceful stop ends streams that outlive the drain period with a final error event, billed for what was delivered', async () => {
    const stopping = await stack.spawnPeer({ SHUTDOWN_GRACE_SECONDS: '2' });
    const account = await apiAccount(stack, admin, '5');
    const id = requestId('drain');
    const response = await fetch(`${stopping.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', 'x-request-id': id },
      body: JSON.stringify({ model: MODEL, stream: true, max_tokens: 400, messages: [{ role: 'user', content: 'A long story [sim:words=300 chunk-delay=40]' }] }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = '';
    while ((text.match(/data: /g) ?? []).length < 5) text += new TextDecoder().decode((await reader.read()).value);
    const signalledAt = Date.now();
    stopping.child.kill('SIGTERM');
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const endedAfterMs = Date.now() - signalledAt;
    // Ended a second before the 2 s grace period ran out, with our final event, not a cut.
    expect(endedAfterMs).toBeGreaterThan(500);
    expect(endedAfterMs).toBeLessThan(2_000);
    const frames = text.split('\n\n').filter((frame) => frame.startsWith('data: '));
    expect(JSON.parse(frames.at(-1)!.slice(6))).toMatchObject({ error: { code: 'shutting_down' } });
    expect(await stopping.exited).toBe(0);
    // Settled before exit: an error event billed for the delivered text, the ledger equal to the balance.
    const event = await usageEventOf(stack, id);
    expect(event).toMatchObject({ status: 'error', error_code: 'shutting_down' });
    expect(Number(event.completion_tokens)).toBeGreaterThan(0);
    expect(Number(event.amount_usd)).toBeGreaterThan(0);
    const balance = await ledgerBalance(stack, account.userId);
    expect(balance.ledger).toBe(balance.balance);
    expect(new Decimal(balance.balance).equals(new Decimal(5).minus(event.amount_usd as string))).toBe(true);
  }, 30_000);
});
