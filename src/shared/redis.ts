import { Cluster } from 'ioredis';
import { anyNodeAnswers, openRedis, PinnedPublisher, type RedisClient } from './redis-connections.js';
import type { Logger } from './logging.js';

export type { RedisClient } from './redis-connections.js';

/** Messages every gateway process sees: cache invalidations and GraphQL subscription events. */
export type BusMessage =
  | { type: 'key-evicted'; keyId: string }
  | { type: 'catalog-changed'; version: number; data: unknown }
  /** A breaker opened or closed, a credential paused: every process skips (or takes back) the route at once. */
  | { type: 'upstream-health'; change: { upstreamId: string; credentialId: string; state: 'closed' | 'open' | 'half_open' | 'rate_limited' | 'auth_failed'; until: number } }
  /** An admin changed the managed upstreams (committed at `version`): every process reloads them from PostgreSQL. */
  | { type: 'upstreams-changed'; version: number }
  /** An account saved its alert settings: whether it has rules now (src/events/alerts). */
  | { type: 'alerts-changed'; userId: string; active: boolean }
  /** `payload`: the event's JSON, parsed apart so only event payloads get their dates back. */
  | { type: 'event'; topic: string; payload: string };

type BusHandler = (message: BusMessage) => void;

/** How often one Redis Cluster node's trouble is logged while it lasts (a failover retries it many times a second). */
const NODE_WARNING_EVERY_MS = 60_000;
/** How often a cluster's nodes are asked whether any answers (`healthy`): one PING per node. */
const CLUSTER_PROBE_MS = 1_000;

/**
 * The state several gateway processes share (REDIS_URL): one connection for commands, one for
 * subscriptions (src/shared/redis-connections.ts). Commands fail at once while Redis is away (no offline
 * queue), so callers fall back instead of waiting; ioredis reconnects by itself and `healthy` turns true again.
 *
 * On a Redis Cluster the bus stays classic PUBLISH/SUBSCRIBE: the cluster hands every message to every node,
 * so the subscription may sit on any node and outlives the failover of any master (docs/architecture.md has the
 * measurements); each process publishes through one node, so its messages keep their order. Channels of their own
 * (`listen`, one per watched account) are sharded (SPUBLISH/SSUBSCRIBE): a message goes to its channel's shard
 * only, whose master the subscribers of that channel listen on.
 */
export class SharedState {
  readonly command: RedisClient;
  /** REDIS_URL names a Redis Cluster: every script's keys must share a slot (a `{hash tag}`). */
  readonly isCluster: boolean;
  private readonly subscriber: RedisClient;
  private readonly handlers = new Set<BusHandler>();
  /** Channels of their own (one per watched account, see src/events/account-event-hub.ts) and their handlers. */
  private readonly channelHandlers = new Map<string, (raw: string) => void>();
  private readonly channel: string;
  /** On a cluster: whether some node answered the last probe (see `watchHealth`); always true on one Redis. */
  private clusterAnswers = true;
  private probeTimer?: NodeJS.Timeout;
  /** On a cluster: the bus goes out through one node, so this process's messages keep their order. */
  private readonly busPublisher?: PinnedPublisher;

  constructor(
    url: string,
    private readonly log: Logger,
    /** Keys and channels of one deployment; tests give each gateway group its own. */
    readonly prefix = 'baikal:',
  ) {
    ({ command: this.command, subscriber: this.subscriber, isCluster: this.isCluster } = openRedis(url));
    this.channel = `${prefix}bus`;
    if (this.command instanceof Cluster) this.busPublisher = new PinnedPublisher(this.command);
    this.watchHealth();
    this.subscriber.on('error', () => {});
    this.subscriber.on('message', (channel: string, raw: string) => {
      if (channel !== this.channel) return this.channelHandlers.get(channel)?.(raw);
      let message: BusMessage;
      try {
        message = JSON.parse(raw) as BusMessage;
      } catch {
        return;
      }
      for (const handler of this.handlers) handler(message);
    });
    this.subscriber.on('smessage', (channel: string, raw: string) => this.channelHandlers.get(channel)?.(raw));
    // ioredis's cluster client renews the bus after a node is lost, not after losing every node (its subscriber
    // forgets the channel): so it is subscribed again whenever the cluster is back (twice is harmless).
    if (this.isCluster) this.subscriber.on('ready', () => this.subscribeBus());
  }

  /** Rejects when Redis is not reachable now; both connections keep retrying either way. */
  async connect(): Promise<void> {
    const connected = await Promise.allSettled([this.command.connect(), this.subscriber.connect()]);
    // Queued until the subscriber connection is up, and renewed by ioredis after every reconnect, so
    // a process that started while Redis was away still hears the others once it is back.
    this.subscribeBus();
    for (const result of connected) if (result.status === 'rejected') throw result.reason;
  }

  private subscribeBus(): void {
    this.subscriber.subscribe(this.channel).catch((error: Error) => this.log.warn({ err: error.message }, 'could not subscribe to the Redis bus'));
  }

  /** Redis answers. On a cluster: its client is connected, though one shard may be failing over (its commands fail). */
  get healthy(): boolean {
    return this.command.status === 'ready' && this.clusterAnswers;
  }

  /** Sends to every process, this one included. Returns false when Redis could not take it. */
  async publish(message: BusMessage): Promise<boolean> {
    try {
      const text = JSON.stringify(message);
      await (this.busPublisher ? this.busPublisher.publish(this.channel, text) : this.command.publish(this.channel, text));
      return true;
    } catch (error) {
      this.log.warn({ err: (error as Error).message, type: message.type }, 'could not publish to other processes');
      return false;
    }
  }

  /**
   * Listens on a channel of its own (resolves once Redis confirms the subscription); one handler per channel.
   * Renewed by ioredis after a reconnect like the bus, and on a cluster after its shard's failover.
   */
  async listen(channel: string, handler: (raw: string) => void): Promise<void> {
    this.channelHandlers.set(channel, handler);
    await (this.isCluster ? this.subscriber.ssubscribe(channel) : this.subscriber.subscribe(channel));
  }

  async unlisten(channel: string): Promise<void> {
    this.channelHandlers.delete(channel);
    await (this.isCluster ? this.subscriber.sunsubscribe(channel) : this.subscriber.unsubscribe(channel)).catch(() => undefined);
  }

  /** Sends raw text on a channel of its own; false when Redis could not take it. */
  async send(channel: string, raw: string): Promise<boolean> {
    try {
      await (this.isCluster ? this.command.spublish(channel, raw) : this.command.publish(channel, raw));
      return true;
    } catch (error) {
      this.log.warn({ err: (error as Error).message }, 'could not publish an account event to other processes');
      return false;
    }
  }

  onMessage(handler: BusHandler): void {
    this.handlers.add(handler);
  }

  async close(): Promise<void> {
    clearInterval(this.probeTimer);
    this.handlers.clear();
    await Promise.allSettled([this.subscriber.quit(), this.command.quit()]);
  }

  /**
   * Logs Redis going away and coming back once each; on a cluster, also a node in trouble (at most once a minute
   * each). A cluster client notices its nodes are gone only when a command needs them, so an idle process would
   * call a cluster with no node left `ready`: on a cluster, some node must also have answered the last probe.
   */
  private watchHealth(): void {
    let wasDown = false;
    const down = (error: Error) => {
      if (!wasDown) this.log.warn({ err: error.message }, 'Redis unavailable: shared limits fall back to this process');
      wasDown = true;
    };
    const up = () => {
      if (wasDown) this.log.info('Redis is back: shared limits resume');
      wasDown = false;
    };
    this.command.on('error', down);
    this.command.on('ready', () => {
      this.clusterAnswers = true;
      up();
    });
    const cluster = this.command;
    if (!(cluster instanceof Cluster)) return;
    let probing = false;
    this.probeTimer = setInterval(() => {
      if (probing || cluster.status !== 'ready') return;
      probing = true;
      void anyNodeAnswers(cluster).then((answers) => {
        probing = false;
        if (answers === this.clusterAnswers || cluster.status !== 'ready') return;
        this.clusterAnswers = answers;
        if (answers) up();
        else down(new Error('no Redis Cluster node answers'));
      });
    }, CLUSTER_PROBE_MS).unref();
    const warned = new Map<string, number>();
    cluster.on('node error', (error: Error, node: string) => {
      const now = Date.now();
      if (now - (warned.get(node) ?? -Infinity) < NODE_WARNING_EVERY_MS) return;
      warned.set(node, now);
      this.log.warn({ err: error.message, node }, 'a Redis Cluster node does not answer: commands for its slots fail until it is back or its replica takes over');
    });
  }
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Event payloads carry Date fields; JSON turns them into ISO strings, this turns them back. */
export function reviveDates(_key: string, value: unknown): unknown {
  return typeof value === 'string' && ISO_DATE.test(value) ? new Date(value) : value;
}

/**
 * An EventTarget for GraphQL subscriptions whose events travel through Redis, so a subscriber on one
 * process receives what another published. Dispatching does not deliver locally; the event comes
 * back from Redis to every process (this one too), so each subscriber sees it exactly once.
 */
export class SharedEventTarget extends EventTarget {
  constructor(private readonly shared: SharedState) {
    super();
    shared.onMessage((message) => {
      if (message.type === 'event') super.dispatchEvent(new CustomEvent(message.topic, { detail: JSON.parse(message.payload, reviveDates) as unknown }));
    });
  }

  override dispatchEvent(event: Event): boolean {
    const detail = (event as CustomEvent).detail as unknown;
    void this.shared.publish({ type: 'event', topic: event.type, payload: JSON.stringify(detail) }).then((sent) => {
      // Redis away: subscribers on this process still hear it.
      if (!sent) super.dispatchEvent(new CustomEvent(event.type, { detail }));
    });
    return true;
  }
}
