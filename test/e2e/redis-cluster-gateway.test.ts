import { randomBytes } from 'node:crypto';
import { print, type DocumentNode } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BalanceChangedDocument, KeyEventsDocument, SessionEventsDocument, type BalanceChangedSubscription, type KeyEventsSubscription, type SessionEventsSubscription } from '../graphql/generated.js';
import { http } from '../helpers/clients.js';
import { apiAccount, createKey, fund, processAdmin, startInferenceStack, type ApiAccount, type InferenceStack } from '../helpers/inference.js';
import type { ServerProcess } from '../helpers/process.js';
import { startRedisCluster, type RedisClusterHarness } from '../helpers/redis-cluster.js';
import { sleep, waitFor } from '../helpers/reliability.js';

/**
 * The built gateway (two processes, dist/src/main.js) with REDIS_URL naming a real Redis Cluster (3 masters,
 * 3 replicas): it starts, /ready says Redis is ok, and GraphQL subscriptions on one process hear what the other
 * does, on the bus (session events) and on the accounts' sharded channels (balance, keys), for accounts on every
 * shard, and again after a master's failover. The money and limit suites on the cluster come with the cluster-safe
 * scripts.
 */
const PREFIX = `baikal-e2e:cluster:${randomBytes(6).toString('hex')}:`;
let cluster: RedisClusterHarness;
let stack: InferenceStack;
let b: ServerProcess;
let admin: { token: string; userId: string };

beforeAll(async () => {
  cluster = await startRedisCluster();
  stack = await startInferenceStack({ REDIS_URL: cluster.url, REDIS_PREFIX: PREFIX, STATUS_PROBE_SECONDS: '0', WORKERS: '1' });
  b = await stack.spawnPeer();
  admin = await processAdmin(stack);
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await cluster?.stop();
});

/** A subscription's data as it arrives; `next(done)` waits (up to `timeoutMs`) for one that `done` accepts. */
function watch<T>(client: Client, document: DocumentNode) {
  const events: T[] = [];
  const stop = client.subscribe<T>({ query: print(document) }, { next: (result) => void (result.data && events.push(result.data as T)), error: () => undefined, complete: () => undefined });
  const next = (done: (event: T) => boolean, timeoutMs = 10_000) => waitFor('a subscription event', () => events.find(done), timeoutMs, 20);
  return { events, next, stop };
}

const socket = (url: string, token: string) => createClient({ url: url.replace('http', 'ws') + '/graphql', webSocketImpl: WebSocket, connectionParams: { sessionToken: token }, retryAttempts: 0 });

/** Accounts until every master holds one's hash tag (`{acct:<id>}`): one per shard, in the order of `masters()`. */
async function accountPerShard(): Promise<ApiAccount[]> {
  const masters = (await cluster.masters()).map((m) => m.port);
  const found = new Map<number, ApiAccount>();
  while (found.size < masters.length) {
    const account = await apiAccount(stack, admin, null);
    const owner = (await cluster.masterOf(`{acct:${account.userId}}`)).port;
    if (!found.has(owner)) found.set(owner, account);
  }
  return masters.map((port) => found.get(port)!);
}

describe('two gateway processes on a Redis Cluster', () => {
  it('start and report Redis ok on /ready', async () => {
    for (const url of [stack.url, b.url]) expect((await http(url, 'GET', '/ready')).body).toMatchObject({ ready: true, redis: 'ok' });
  });

  it('deliver subscriptions across processes: session events on the bus, balance and key events for an account on every shard', async () => {
    for (const account of await accountPerShard()) {
      const client = socket(stack.url, account.token);
      try {
        const balance = watch<BalanceChangedSubscription>(client, BalanceChangedDocument);
        const keys = watch<KeyEventsSubscription>(client, KeyEventsDocument);
        // The first balance event is the balance now: by then the account's channel is listened on.
        await balance.next((e) => e.balanceChanged.transaction === null);
        await sleep(200); // the key events subscription, started beside it
        await fund({ url: b.url }, admin, account.userId, '2.5');
        expect((await balance.next((e) => e.balanceChanged.transaction !== null)).balanceChanged).toMatchObject({ balanceUsd: '2.5', transaction: { kind: 'adjustment', amountUsd: '2.5' } });
        const created = await createKey({ url: b.url }, account.token, { label: 'from b' });
        expect((await keys.next((e) => e.keyEvents.keyId === created.id)).keyEvents.type).toBe('CREATED');
        const sessions = watch<SessionEventsSubscription>(client, SessionEventsDocument);
        await sleep(300);
        expect((await http(b.url, 'POST', '/auth/logout', { token: account.token })).status).toBeLessThan(300);
        expect((await sessions.next(() => true)).sessionEvents.kind).toBe('SIGNED_OUT');
      } finally {
        await client.dispose();
      }
    }
  });

  it('keep delivering an account’s events after the master of its shard is killed and its replica takes over', async () => {
    const [account] = await accountPerShard();
    const client = socket(stack.url, account!.token);
    const readiness: unknown[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const url of [stack.url, b.url]) readiness.push((await http(url, 'GET', '/ready')).body?.redis);
        await sleep(50);
      }
    })();
    try {
      const balance = watch<BalanceChangedSubscription>(client, BalanceChangedDocument);
      await balance.next((e) => e.balanceChanged.transaction === null);
      await cluster.killMaster(0);
      const killedAt = Date.now();
      const failoverMs = await cluster.waitForFailover();
      // Funding on the other process until its event crosses (one made while the shard was down may not).
      let amount = 0;
      await waitFor('a balance event from the other process after the failover', async () => {
        amount += 1;
        await fund({ url: b.url }, admin, account!.userId, String(amount));
        await sleep(200);
        return balance.events.some((e) => e.balanceChanged.transaction?.amountUsd === String(amount));
      }, 15_000, 0);
      const eventsBackMs = Date.now() - killedAt;
      console.log(`gateway on a cluster: failover ${failoverMs} ms, account events across processes again ${eventsBackMs} ms after the kill`);
      expect(eventsBackMs).toBeLessThan(failoverMs + 5_000);
      // A shard failing over is not "Redis is gone": /ready never said unreachable.
      expect(readiness.filter((r) => r !== 'ok')).toEqual([]);
    } finally {
      sampling = false;
      await sampler;
      await client.dispose();
    }
  });
});
