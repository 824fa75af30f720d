import { randomBytes } from 'node:crypto';
import { print } from 'graphql';
import { createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionEventsDocument, SetModelPricesDocument, type SessionEventsSubscription } from '../graphql/generated.js';
import { graphql, http } from '../helpers/clients.js';
import { apiAccount, createKey, processAdmin, requestId, startInferenceStack, usageEventOf, type InferenceStack } from '../helpers/inference.js';
import type { ServerProcess } from '../helpers/process.js';

/**
 * Two gateway processes on one PostgreSQL and one Redis (the scale-out issue): every limit, cache
 * and subscription holds across both.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `baikal-e2e:${randomBytes(6).toString('hex')}:`;
const LEASE_SECONDS = 2;
const MODEL = 'gen-5.6-luna';

let stack: InferenceStack;
let b: ServerProcess;
let admin: { token: string; userId: string };

beforeAll(async () => {
  stack = await startInferenceStack({ REDIS_URL, REDIS_PREFIX: PREFIX, SLOT_LEASE_SECONDS: String(LEASE_SECONDS), STATUS_PROBE_SECONDS: '0' });
  b = await stack.spawnPeer();
  admin = await processAdmin(stack);
}, 120_000);

afterAll(async () => {
  await stack?.close();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

/** One chat completion by plain fetch (no client retries): the status and our error code. */
async function chat(url: string, key: string, prompt = 'hello', id = requestId('scale')): Promise<{ status: number; code: string | null; id: string }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: prompt }] }),
  });
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, code: body.error?.code ?? null, id };
}

const count = (results: { code: string | null; status: number }[], code: string | null) => results.filter((r) => r.code === code).length;
const both = () => [stack.url, b.url];

describe('two gateway processes sharing one Redis', () => {
  it('admits exactly 120 of 300 requests in a minute on one key spread over both', async () => {
    const account = await apiAccount(stack, admin, '50');
    const results: { status: number; code: string | null }[] = [];
    // Waves of 6 keep the concurrency limits out of it: this is the per-minute window alone.
    for (let i = 0; i < 300; i += 6) results.push(...(await Promise.all(Array.from({ length: 6 }, (_, j) => chat(both()[(i + j) % 2]!, account.key)))));
    expect(count(results, null)).toBe(120);
    expect(count(results, 'rate_limited')).toBe(180);
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
  }, 120_000);

  it('holds 8 concurrent requests per key and 48 overall across both', async () => {
    const slow = '[sim:latency=1000] slow';
    const account = await apiAccount(stack, admin, '50');
    const perKey = await Promise.all(Array.from({ length: 20 }, (_, i) => chat(both()[i % 2]!, account.key, slow)));
    expect(count(perKey, null)).toBe(8);
    expect(count(perKey, 'concurrency_limited')).toBe(12);

    const keys = [account.key];
    for (let i = 0; i < 6; i++) keys.push((await createKey(stack, account.token)).key);
    // 7 keys x 8 = 56 at once: the global limit of 48 admits 48 wherever they land.
    const overall = await Promise.all(keys.flatMap((key, k) => Array.from({ length: 8 }, (_, i) => chat(both()[(k + i) % 2]!, key, slow))));
    expect(count(overall, null)).toBe(48);
    expect(count(overall, 'capacity_limited') + count(overall, 'concurrency_limited')).toBe(8);
  }, 60_000);

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
    const billed = await chat(b.url, account.key);
    expect(billed.status).toBe(200);
    const event = await usageEventOf(stack, billed.id);
    expect(Number(event.public_input_usd_per_1m)).toBe(7.5);
    expect(Number(event.public_output_usd_per_1m)).toBe(9.25);
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
    const inFlight = Array.from({ length: 8 }, () => chat(c.url, account.key, '[sim:latency=1400] held').catch(() => null));
    // Wait until all 8 hold their leases in Redis (a fresh process under load takes a moment).
    const redis = new Redis(REDIS_URL);
    try {
      for (let tries = 0; (await redis.zcard(`${PREFIX}slots:${account.keyId}`)) < 8; tries++) {
        if (tries > 100) throw new Error('the 8 slow requests were never admitted');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await redis.quit();
    }
    expect(await chat(stack.url, account.key)).toMatchObject({ status: 429, code: 'concurrency_limited' });
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
    expect(cluster.lines.some((line) => line.includes('cluster primary started 2 workers'))).toBe(true);
    cluster.child.kill('SIGTERM');
    expect(await cluster.exited).toBe(0);
  }, 60_000);
});
