import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccountEventHub, type AccountEvent, type AccountEventStream, type KeyEvent } from '../../src/events/account-event-hub.js';
import { createLogger } from '../../src/shared/logging.js';
import { SharedState } from '../../src/shared/redis.js';
import { SharedWindowCounter } from '../../src/shared/throttle.js';
import { startRedisCluster, type RedisClusterHarness } from '../helpers/redis-cluster.js';

/**
 * SharedState on a real Redis Cluster (three masters, three replicas): two SharedStates on one prefix stand for
 * two gateway processes. The failover under load is test/reliability/redis-cluster-failover.test.ts.
 */
const log = createLogger('silent');
let cluster: RedisClusterHarness;
const opened: SharedState[] = [];
const prefix = `baikal-test:cluster:${randomBytes(6).toString('hex')}:`;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterEach(async () => {
  await Promise.all(opened.splice(0).map((state) => state.close()));
});

afterAll(async () => {
  await cluster?.stop();
});

async function processes(count: number): Promise<SharedState[]> {
  const states = Array.from({ length: count }, () => new SharedState(cluster.url, log, prefix));
  opened.push(...states);
  await Promise.all(states.map((state) => state.connect()));
  return states;
}

/** Account ids whose channels (`{acct:<id>}`) sit on each master in turn: one account per shard. */
async function accountPerShard(): Promise<string[]> {
  const masters = (await cluster.masters()).map((m) => m.port);
  const found = new Map<number, string>();
  while (found.size < masters.length) {
    const userId = randomUUID();
    const owner = (await cluster.masterOf(`{acct:${userId}}`)).port;
    if (!found.has(owner)) found.set(owner, userId);
  }
  return masters.map((port) => found.get(port)!);
}

async function drain(stream: AccountEventStream, ms = 200): Promise<AccountEvent[]> {
  const got: AccountEvent[] = [];
  for (;;) {
    const next = await Promise.race([stream.next(), new Promise<null>((resolve) => setTimeout(() => resolve(null), ms))]);
    if (!next || next.done) return got;
    got.push(next.value);
  }
}

const keyEvent = (keyId: string): KeyEvent => ({ kind: 'key', type: 'created', keyId, limit: null, refused: null, at: new Date('2026-11-28T10:00:00.000Z') });

describe('SharedState on a Redis Cluster', () => {
  it('connects, says it is a cluster, and reaches keys on every shard', async () => {
    const [state] = await processes(1);
    expect(state!.isCluster).toBe(true);
    expect(state!.healthy).toBe(true);
    const masters = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const key = `${prefix}probe:${i}`;
      await state!.command.set(key, String(i));
      expect(await state!.command.get(key)).toBe(String(i));
      masters.add((await cluster.masterOf(key)).port);
    }
    expect(masters.size).toBe(3);
    await cluster.dropKeys(prefix);
  });

  it('carries bus messages between two processes: every process hears each once, in the order its sender sent them', async () => {
    const [a, b] = await processes(2);
    const heard = { a: [] as string[], b: [] as string[] };
    a!.onMessage((message) => message.type === 'key-evicted' && heard.a.push(message.keyId));
    b!.onMessage((message) => message.type === 'key-evicted' && heard.b.push(message.keyId));
    await new Promise((resolve) => setTimeout(resolve, 200)); // the bus subscription is confirmed asynchronously
    // Sent without waiting for each other, as services publish: ioredis alone would spread them over random masters.
    const sent = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b)!.publish({ type: 'key-evicted', keyId: `${i % 2 ? 'a' : 'b'}${i}` })));
    expect(sent.every(Boolean)).toBe(true);
    await waitUntil(() => heard.a.length >= 100 && heard.b.length >= 100);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const inOrder = (from: string) => Array.from({ length: 100 }, (_, i) => `${i % 2 ? 'a' : 'b'}${i}`).filter((k) => k.startsWith(from));
    for (const got of [heard.a, heard.b]) {
      expect(got).toHaveLength(100);
      expect(got.filter((k) => k.startsWith('a'))).toEqual(inOrder('a'));
      expect(got.filter((k) => k.startsWith('b'))).toEqual(inOrder('b'));
    }
  });

  it('delivers account events across processes exactly once for accounts on every shard, on sharded channels', async () => {
    const [sa, sb] = await processes(2);
    const [a, b] = [new AccountEventHub({ shared: sa!, log }), new AccountEventHub({ shared: sb!, log })];
    const users = await accountPerShard();
    const onA = users.map((user) => a.subscribe(user));
    const onB = users.map((user) => b.subscribe(user));
    await Promise.all([...onA, ...onB].map((stream) => stream.ready));
    // Each account's channel is a shard channel on the master of its hash tag, with one subscriber per process.
    for (const user of users) {
      const master = await cluster.masterOf(`{acct:${user}}`);
      const direct = new Redis({ host: '127.0.0.1', port: master.port });
      try {
        expect(await direct.call('PUBSUB', 'SHARDNUMSUB', `${prefix}{acct:${user}}:events`)).toEqual([`${prefix}{acct:${user}}:events`, 2]);
      } finally {
        direct.disconnect();
      }
    }
    users.forEach((user, i) => {
      a.publish(user, keyEvent(`from-a-${i}`));
      b.publish(user, keyEvent(`from-b-${i}`));
    });
    const got = await Promise.all([...onA, ...onB].map((stream) => drain(stream)));
    got.forEach((events, n) => {
      const i = n % users.length;
      expect(events.map((e) => (e as KeyEvent).keyId).sort()).toEqual([`from-a-${i}`, `from-b-${i}`]);
      expect((events[0] as KeyEvent).at).toEqual(new Date('2026-11-28T10:00:00.000Z'));
    });
    await Promise.all([...onA, ...onB].map((stream) => stream.return()));
    // Nobody watches any more: the shard channels are gone.
    await waitUntil(async () => {
      for (const user of users) {
        const direct = new Redis({ host: '127.0.0.1', port: (await cluster.masterOf(`{acct:${user}}`)).port });
        const [, count] = (await direct.call('PUBSUB', 'SHARDNUMSUB', `${prefix}{acct:${user}}:events`)) as [string, number];
        direct.disconnect();
        if (count !== 0) return false;
      }
      return true;
    });
  });

  it('counts sign-in attempts across processes (the throttle script) on the cluster', async () => {
    const [a, b] = await processes(2);
    const counters = [new SharedWindowCounter(a!, 'login-account', 5, 60_000), new SharedWindowCounter(b!, 'login-account', 5, 60_000)];
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) waits.push(await counters[i % 2]!.take('alice'));
    expect(waits.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(waits.slice(5).every((w) => w > 0)).toBe(true);
    await counters[0]!.reset('alice');
    expect(await counters[1]!.take('alice')).toBe(0);
    await cluster.dropKeys(prefix);
  });

  // Last: it takes the whole cluster away.
  it('says Redis is away when every node is, refuses commands at once, and renews the bus and account channels when it is back', async () => {
    const [sa, sb] = await processes(2);
    const [a, b] = [new AccountEventHub({ shared: sa!, log }), new AccountEventHub({ shared: sb!, log })];
    const users = await accountPerShard();
    const heard: string[] = [];
    sb!.onMessage((message) => message.type === 'key-evicted' && heard.push(message.keyId));
    const got = new Map(users.map((user) => [user, [] as string[]]));
    const streams = users.map((user) => {
      const stream = b.subscribe(user);
      void (async () => {
        for await (const event of stream) got.get(user)!.push((event as KeyEvent).keyId);
      })();
      return stream;
    });
    await Promise.all(streams.map((stream) => stream.ready));
    await sa!.command.set(`${prefix}touch`, '1');

    await cluster.killAll();
    const killedAt = Date.now();
    await waitUntil(() => !sa!.healthy && !sb!.healthy, 3_000);
    const unhealthyAfterMs = Date.now() - killedAt;
    const refusedAt = Date.now();
    await expect(sa!.command.get(`${prefix}touch`)).rejects.toThrow();
    const refusedInMs = Date.now() - refusedAt;
    expect(await sa!.publish({ type: 'key-evicted', keyId: 'while-away' })).toBe(false);

    const restartedAt = Date.now();
    await cluster.restartAll();
    await waitUntil(() => sa!.healthy && sb!.healthy, 10_000);
    const healthyAgainMs = Date.now() - restartedAt;
    // Everything sent from now on arrives, once each: the bus on any node, each account on its shard.
    await waitUntil(async () => {
      await sa!.publish({ type: 'key-evicted', keyId: 'probe' });
      users.forEach((user) => a.publish(user, keyEvent('probe')));
      await new Promise((resolve) => setTimeout(resolve, 100));
      return heard.includes('probe') && users.every((user) => got.get(user)!.includes('probe'));
    }, 10_000);
    const renewedMs = Date.now() - restartedAt;
    heard.length = 0;
    for (const list of got.values()) list.length = 0;
    for (let i = 0; i < 10; i++) {
      expect(await sa!.publish({ type: 'key-evicted', keyId: `after-${i}` })).toBe(true);
      users.forEach((user) => a.publish(user, keyEvent(`after-${i}`)));
    }
    const expected = Array.from({ length: 10 }, (_, i) => `after-${i}`);
    await waitUntil(() => heard.length >= 10 && users.every((user) => got.get(user)!.length >= 10));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(heard.filter((k) => k !== 'probe')).toEqual(expected);
    for (const user of users) expect(got.get(user)!.filter((k) => k !== 'probe')).toEqual(expected);
    console.log(`whole cluster away: unhealthy after ${unhealthyAfterMs} ms, a command refused in ${refusedInMs} ms; restarted: healthy ${healthyAgainMs} ms, bus and account channels renewed ${renewedMs} ms after the nodes were started again`);
    expect(refusedInMs).toBeLessThan(500);
    await Promise.all(streams.map((stream) => stream.return()));
  }, 60_000);
});

async function waitUntil(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
