import { randomBytes } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../helpers/accounts.js';
import { http } from '../helpers/clients.js';
import { apiAccount, processAdmin, requestId, setKeyLimits, startInferenceStack, type InferenceStack } from '../helpers/inference.js';
import type { ServerProcess } from '../helpers/process.js';
import { eventsByRequest, METRICS_TOKEN, moneyReport, rawCall, sleep, waitFor, waitIdle } from '../helpers/reliability.js';
import { startTcpForwarder, type TcpForwarder } from '../helpers/tcp-forwarder.js';
import { dropRedisKeys } from '../helpers/redis.js';

/**
 * Issue 11, Faults, storage: Redis killed and restarted, for a gateway process that reaches Redis
 * through a forwarder (the stack's own gateway talks to Redis directly). The scale-out tests already
 * cover a process that starts without Redis; here Redis goes away under traffic and comes back, once
 * with its data (a network blip) and once empty (a restart). Money limits stay exact or refuse with
 * 503, /ready reports it, and the shared limits resume.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `baikal-rel:${randomBytes(6).toString('hex')}:`;

let stack: InferenceStack;
let forwarder: TcpForwarder;
let gateway: ServerProcess;
let admin: { token: string; userId: string };

beforeAll(async () => {
  stack = await startInferenceStack({ REDIS_URL, REDIS_PREFIX: PREFIX, SLOT_LEASE_SECONDS: '2', METRICS_TOKEN, STATUS_PROBE_SECONDS: '0', WORKERS: '1' });
  admin = await processAdmin(stack);
  const redis = new URL(REDIS_URL);
  forwarder = await startTcpForwarder({ host: redis.hostname, port: Number(redis.port || 6379) });
  gateway = await stack.spawnPeer({ REDIS_URL: forwarder.urlFor(REDIS_URL) });
}, 90_000);

afterAll(async () => {
  forwarder?.restore();
  await stack?.close();
  await forwarder?.close();
  await dropRedisKeys(PREFIX);
});

const ask = (url: string, key: string, prompt = 'hi [sim:words=3]', stream = false) =>
  rawCall(url, key, { model: 'gen-5.6-luna', max_tokens: 16, ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content: prompt }] }, { requestId: requestId('redis'), received: stack.received });
const me = async (url: string, key: string) => (await http(url, 'GET', '/v1/me', { headers: { authorization: `Bearer ${key}` } })).body as { balance_usd: string; available_usd: string };

async function outage(wipe: boolean) {
  const account = await apiAccount(stack, admin, '1');
  await setKeyLimits(stack, admin, account.keyId, { rpmLimit: 100_000 });
  expect((await ask(gateway.url, account.key)).status).toBe(200);
  // Streams in flight when Redis goes away: admitted with holds in Redis, settled while it is gone.
  const inFlight = Array.from({ length: 6 }, () => ask(gateway.url, account.key, 'in flight [sim:words=12 chunk-delay=150]', true));
  await waitFor('the streams to be admitted', () => stack.primary.requests.filter((r) => JSON.stringify(r.body).includes('in flight') && r.endedAt === undefined).length === 6, 5_000);
  forwarder.cut('reset');
  if (wipe) {
    // A restart: Redis comes back empty.
    const direct = new Redis(REDIS_URL);
    const keys = await direct.keys(`${PREFIX}*`);
    if (keys.length) await direct.del(...keys);
    await direct.quit();
  }
  const streams = await Promise.all(inFlight);
  // The streams were already admitted: they finish, and are billed (through PostgreSQL) as usual.
  expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200, 200, 200]);
  expect(streams.every((s) => s.frames.at(-1) === '[DONE]')).toBe(true);

  // Meanwhile: billable requests refused with 503 (never admitted unchecked, never 401); the rest is served; /ready says so.
  const refused = await ask(gateway.url, account.key);
  expect(refused.status).toBe(503);
  expect(JSON.parse(refused.text).error).toMatchObject({ code: 'billing_unavailable' });
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  expect((await http(gateway.url, 'GET', '/v1/models', { headers: { authorization: `Bearer ${account.key}` } })).status).toBe(200);
  expect((await http(gateway.url, 'GET', '/ready')).body).toMatchObject({ redis: 'unreachable' });

  forwarder.restore();
  const restoredAt = Date.now();
  await waitFor('Redis to be back for the gateway', async () => (await http(gateway.url, 'GET', '/ready')).body?.redis === 'ok', 10_000, 100);
  await waitFor('billable requests to be served again', async () => (await ask(gateway.url, account.key)).status === 200, 10_000, 200);
  const recoveredMs = Date.now() - restoredAt;

  // Exact again: what Redis admits against equals PostgreSQL's balance once every settlement is written.
  await waitIdle(gateway.url);
  await waitFor('settlements to be written', async () => {
    const truth = await ledgerBalance(stack, account.userId);
    const view = await me(gateway.url, account.key);
    return new Decimal(view.balance_usd).equals(truth.balance) && view.available_usd === view.balance_usd;
  }, 10_000, 200);
  return { account, recoveredMs, streams };
}

describe('Redis killed and restarted under traffic', () => {
  it('a blip (Redis back with its data): in-flight streams settle, new billable requests get 503 meanwhile, the cached balance is corrected from PostgreSQL', async () => {
    const { account, recoveredMs } = await outage(false);
    const view = await me(gateway.url, account.key);
    // Six streams settled while Redis was unreachable: their costs missed the cache, which must not keep the old figure.
    expect(new Decimal(view.balance_usd).lessThan(1)).toBe(true);
    console.log(`[reliability] Redis blip: billable requests 503 during the cut, served again ${recoveredMs} ms after it ended, cached balance = ledger`);
  }, 60_000);

  it('a restart (Redis back empty): balances are reseeded from PostgreSQL and limits are shared again', async () => {
    const { account, recoveredMs } = await outage(true);
    // Shared limits resume: a per-minute limit of 4 holds across both processes again.
    const limited = await apiAccount(stack, admin, '1');
    await setKeyLimits(stack, admin, limited.keyId, { rpmLimit: 4 });
    const verdicts = [];
    for (let i = 0; i < 10; i++) verdicts.push((await ask(i % 2 ? gateway.url : stack.url, limited.key)).status);
    expect(verdicts.filter((s) => s === 200)).toHaveLength(4);
    expect(verdicts.filter((s) => s === 429)).toHaveLength(6);
    // A tight balance after the restart: spending never passes it.
    const tight = await apiAccount(stack, admin, '0.00002');
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => ask(i % 2 ? gateway.url : stack.url, tight.key, 'tight [sim:words=10]')));
    expect(results.filter((r) => r.status !== 200 && r.status !== 402)).toEqual([]);
    await waitIdle(gateway.url);
    await sleep(300);
    const balance = await ledgerBalance(stack, tight.userId);
    expect(new Decimal(balance.balance).isNegative()).toBe(false);
    expect(balance.ledger).toBe(balance.balance);
    const view = await me(gateway.url, account.key);
    expect(view.available_usd).toBe(view.balance_usd);
    console.log(`[reliability] Redis restart (empty): served again ${recoveredMs} ms after it came back, ${results.filter((r) => r.status === 200).length}/40 admitted on a tight balance, never below zero`);
  }, 60_000);

  it('after both: one usage event per answered request, balance = ledger for every account', async () => {
    const report = await moneyReport(stack.db);
    expect(report).toMatchObject({ balanceMismatches: [], settlementMismatches: [], duplicateRequests: [], expiredActiveHolds: 0 });
    const rows = await stack.db.query<{ request_id: string }>(`select request_id from usage_events where request_id like 'test-redis-%'`);
    const events = await eventsByRequest(stack.db, rows.map((r) => r.request_id));
    expect([...events.values()].filter((list) => list.length !== 1)).toEqual([]);
    expect(stack.received.join('\n')).not.toContain(stack.canaries.credential);
  });
});
