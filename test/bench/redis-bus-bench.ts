/**
 * `npm run bench:redis-bus`: classic PUBLISH against sharded SPUBLISH on a local Redis Cluster (3 masters, 3 replicas,
 * test/helpers/redis-cluster.ts), as the gateway's bus would use them: two subscribers (two processes), 300-byte
 * messages. For each kind, three rounds of: the delivery latency of 1,000 messages sent one at a time (p50, p99), then
 * 20,000 messages sent 200 at a time (throughput, and the CPU all six nodes spent per 1,000, from INFO cpu).
 * docs/architecture.md ("Pub/sub on a Redis Cluster") has the figures and what decided the bus.
 */
import { performance } from 'node:perf_hooks';
import { Cluster, Redis } from 'ioredis';
import { startRedisCluster, type RedisClusterHarness } from '../helpers/redis-cluster.js';

const MESSAGES = 20_000;
const BATCH = 200;
const PAYLOAD = 'x'.repeat(300);

/** CPU seconds (system + user) every node has used so far. */
async function clusterCpu(cluster: RedisClusterHarness): Promise<number> {
  let total = 0;
  for (const port of cluster.ports) {
    const redis = new Redis({ host: '127.0.0.1', port });
    const info = await redis.info('cpu');
    redis.disconnect();
    total += Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]) + Number(/used_cpu_user:([\d.]+)/.exec(info)![1]);
  }
  return total;
}

async function round(cluster: RedisClusterHarness, kind: 'classic' | 'sharded') {
  const nodes = cluster.ports.map((port) => ({ host: '127.0.0.1', port }));
  const channel = `bench:${kind}:bus`;
  const publisher = new Cluster(nodes);
  const subscribers = [0, 1].map(() => new Cluster(nodes, { shardedSubscribers: kind === 'sharded' }));
  let received = 0;
  const latencies: number[] = [];
  let wake: (() => void) | null = null;
  for (const subscriber of subscribers) {
    subscriber.on(kind === 'classic' ? 'message' : 'smessage', (_channel: string, message: string) => {
      received++;
      if (message.startsWith('t:')) latencies.push(performance.now() - Number(message.slice(2)));
      wake?.();
    });
    await (kind === 'classic' ? subscriber.subscribe(channel) : subscriber.ssubscribe(channel));
  }
  const send = (message: string) => (kind === 'classic' ? publisher.publish(channel, message) : publisher.spublish(channel, message));
  const until = async (count: number) => {
    while (received < count) await new Promise<void>((resolve) => (wake = resolve));
  };
  for (let i = 0; i < 1_000; i++) {
    const target = received + subscribers.length;
    await send(`t:${performance.now()}`);
    await until(target);
  }
  latencies.sort((a, b) => a - b);
  const cpuBefore = await clusterCpu(cluster);
  const started = performance.now();
  const target = received + subscribers.length * MESSAGES;
  for (let i = 0; i < MESSAGES; i += BATCH) await Promise.all(Array.from({ length: BATCH }, () => send(PAYLOAD)));
  await until(target);
  const seconds = (performance.now() - started) / 1000;
  const cpuMsPer1000 = ((await clusterCpu(cluster)) - cpuBefore) * 1000 / (MESSAGES / 1000);
  await Promise.all([publisher.quit(), ...subscribers.map((s) => s.quit())]);
  return { kind, p50Ms: latencies[500]!.toFixed(3), p99Ms: latencies[990]!.toFixed(3), perSecond: Math.round(MESSAGES / seconds), redisCpuMsPer1000: cpuMsPer1000.toFixed(1) };
}

const cluster = await startRedisCluster();
try {
  for (let i = 0; i < 3; i++) for (const kind of ['classic', 'sharded'] as const) console.log(JSON.stringify(await round(cluster, kind)));
} finally {
  await cluster.stop();
}
