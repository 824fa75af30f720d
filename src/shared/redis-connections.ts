import { Cluster, Redis, type ClusterOptions } from 'ioredis';
import { parseRedisUrl, type RedisTarget } from './redis-url.js';

/** A connection for commands: one Redis, or a Redis Cluster client that routes each command to its slot's master. */
export type RedisClient = Redis | Cluster;

/** Both the same backoff: a process that lost Redis tries again soon, and at most every 2 s. */
const reconnectDelay = (times: number) => Math.min(times * 200, 2_000);

/**
 * The two connections of a SharedState (commands; subscriptions) for what REDIS_URL names. Neither connects
 * before `connect()`. Commands never wait in an offline queue: while Redis is away they fail at once and the
 * callers fall back (limits to this process, money to 503). Subscriptions do queue, so a process that started
 * while Redis was away subscribes once it is back.
 */
export function openRedis(url: string): { command: RedisClient; subscriber: RedisClient; isCluster: boolean } {
  const target = parseRedisUrl(url);
  if (target.kind === 'single') {
    const options = { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true, retryStrategy: reconnectDelay };
    // Not auto-pipelined: a settlement frees its request's concurrency slot, and behind an auto-pipeline's batch it
    // reached Redis after the client's next request, which the global limit then refused (the bench's closed loop at
    // 48: 135-173 refused with it, 1 without; Redis spent 55-69 us per request with it, 89-101 without).
    return { command: new Redis(target.url, options), subscriber: new Redis(target.url, { ...options, enableOfflineQueue: true }), isCluster: false };
  }
  return {
    // Not auto-pipelined either: with it, scripts failed on a cluster's nodes (measured: 19 of 48 admissions refused
    // with billing_unavailable in the scale-out suite).
    command: new Cluster(target.nodes, clusterOptions(target, { enableOfflineQueue: false })),
    // One subscriber connection for the classic channels (the bus) on any node, and one per master for the sharded
    // channels (the accounts'); ioredis renews both after a failover (src/shared/redis.ts says which is which).
    subscriber: new Cluster(target.nodes, clusterOptions(target, { enableOfflineQueue: true, shardedSubscribers: true })),
    isCluster: true,
  };
}

/**
 * A master failover (its replica promoted after cluster-node-timeout) must not look like "Redis is gone": the client
 * stays `ready` while any node answers, and a command for the failing shard is retried every 100 ms (the connection
 * closed, CLUSTERDOWN, TRYAGAIN) and follows MOVED to the new master, at most 10 times: about one second, enough for
 * the moment of the switch, and no longer, because a caller waiting out a whole node timeout (15 s by default) is
 * worse off than one told at once that Redis is away. Like a single Redis's reconnect (ioredis resends what was
 * unanswered), the retry may resend a command that had run on the master that died: a script must be safe to run twice.
 */
function clusterOptions(target: Extract<RedisTarget, { kind: 'cluster' }>, own: Pick<ClusterOptions, 'enableOfflineQueue' | 'shardedSubscribers'>): ClusterOptions {
  return {
    ...own,
    lazyConnect: true,
    clusterRetryStrategy: reconnectDelay,
    // Replicas lag their master (asynchronous replication): a limit or a balance read there could miss the last
    // admission, so every command goes to the master.
    scaleReads: 'master',
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    maxRedirections: 10,
    redisOptions: {
      ...(target.username ? { username: target.username } : {}),
      ...(target.password ? { password: target.password } : {}),
      ...(target.tls ? { tls: {} } : {}),
      // A node that does not answer (not one that refuses) holds a command for this long, not ioredis's 10 s.
      connectTimeout: 2_000,
    },
  };
}

/** Whether some node of the cluster answers a PING now (ioredis notices a lost node only when a command needs it). */
export async function anyNodeAnswers(cluster: Cluster): Promise<boolean> {
  return Promise.any(cluster.nodes('all').map((node) => node.ping())).then(
    () => true,
    () => false,
  );
}

/**
 * PUBLISH on a cluster through one node while it answers. ioredis sends a command without a key to a random master,
 * and two messages sent through two nodes may reach a subscriber in either order; through one node they arrive in the
 * order they were sent (as on one Redis), whichever node the subscriber listens on. When that node fails, the first
 * master (by address) that answers takes over: at most three tries, so a message is not held while the cluster is away.
 */
export class PinnedPublisher {
  private node: Redis | null = null;

  constructor(private readonly cluster: Cluster) {}

  async publish(channel: string, text: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const node = (this.node ??= this.choose());
      if (!node) throw new Error('no Redis Cluster master to publish through');
      try {
        await node.publish(channel, text);
        return;
      } catch (error) {
        if (this.node === node) this.node = null;
        if (attempt >= 3) throw error;
      }
    }
  }

  private choose(): Redis | null {
    const address = (node: Redis) => `${node.options.host}:${node.options.port}`;
    const masters = this.cluster.nodes('master').sort((a, b) => address(a).localeCompare(address(b)));
    return masters.find((node) => node.status === 'ready') ?? masters.find((node) => node.status !== 'end') ?? null;
  }
}
