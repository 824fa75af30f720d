import { Redis } from 'ioredis';
import { startRedisCluster, type RedisClusterHarness } from './redis-cluster.js';

/** The Redis the tests share (each test group under a prefix of its own). */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Removes every key a test group (or a bench phase) left under its prefix. */
export async function dropRedisKeys(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  const redis = new Redis(url);
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}

/**
 * A Redis the gateway under test runs on, one or a cluster, as a suite sees it: its URL, the keys under a
 * pattern (on a cluster, every master's), one hash field, and a clean-up. The same suites run on both.
 */
export interface TestRedis {
  kind: 'one Redis' | 'a Redis Cluster (3 masters, 3 replicas)';
  url: string;
  keys(pattern: string): Promise<string[]>;
  hget(key: string, field: string): Promise<string | null>;
  /** Removes what a test group left under its prefix; stops a cluster the suite started. */
  close(prefix: string): Promise<void>;
  /** The cluster's harness (kill a master, wait for its failover), on a cluster only. */
  cluster?: RedisClusterHarness;
}

export function sharedRedis(): TestRedis {
  const withClient = async <T>(work: (redis: Redis) => Promise<T>): Promise<T> => {
    const redis = new Redis(TEST_REDIS_URL);
    try {
      return await work(redis);
    } finally {
      await redis.quit();
    }
  };
  return {
    kind: 'one Redis',
    url: TEST_REDIS_URL,
    keys: (pattern) => withClient((redis) => redis.keys(pattern)),
    hget: (key, field) => withClient((redis) => redis.hget(key, field)),
    close: dropRedisKeys,
  };
}

/** A real cluster of the suite's own (test/helpers/redis-cluster.ts). */
export async function clusterRedis(): Promise<TestRedis> {
  // A node timeout of 5 s: with 1 s a node starved of CPU by the suite beside it was failed over by its peers.
  const cluster = await startRedisCluster({ requireFullCoverage: false, nodeTimeoutMs: 5_000 });
  const onEveryMaster = async <T>(work: (redis: Redis) => Promise<T[]>): Promise<T[]> => {
    const results = await Promise.all(
      (await cluster.masters()).map(async ({ port }) => {
        const redis = new Redis({ port, host: '127.0.0.1' });
        try {
          return await work(redis);
        } finally {
          await redis.quit();
        }
      }),
    );
    return results.flat();
  };
  return {
    kind: 'a Redis Cluster (3 masters, 3 replicas)',
    url: cluster.url,
    cluster,
    keys: (pattern) => onEveryMaster((redis) => redis.keys(pattern)),
    hget: async (key, field) => (await onEveryMaster(async (redis) => [await redis.hget(key, field).catch(() => null)])).find((value) => value !== null) ?? null,
    close: async () => cluster.stop(),
  };
}
