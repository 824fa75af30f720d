import { randomUUID } from 'node:crypto';
import type { Logger } from '../shared/logging.js';
import { reviveDates, type SharedState } from '../shared/redis.js';

/** A ledger row as a balance event names it: what moved the balance. */
export interface LedgerRowPayload {
  id: string;
  kind: string;
  amountUsd: string;
  paidUsd: string;
  bonusUsd: string;
  apiKeyId: string | null;
  createdAt: Date;
}

/**
 * An account's ledger balances right after a committed ledger row (`transaction`), or as they are now when a
 * subscription starts (`transaction` null). What is held and available is added where a subscriber receives it
 * (src/billing/balance-events.ts `withHolds`): only watched accounts pay for that look-up.
 */
export interface BalanceEvent {
  kind: 'balance';
  paidUsd: string;
  bonusUsd: string;
  balanceUsd: string;
  transaction: LedgerRowPayload | null;
  at: Date;
}

/**
 * The requests of one committed usage batch for one account (coalesced: one event per account per batch, about
 * every USAGE_FLUSH_MS under load), each as the positional values it was written from (src/usage/usage-recorder.ts
 * `usageEventOf` makes the owner's view of one: operator-only fields are dropped there, before any user sees it).
 */
export interface UsageEvent {
  kind: 'usage';
  records: unknown[][];
}

export type KeyEventType = 'created' | 'revoked' | 'monthly_cap_reached' | 'limit_refused';

/** Something happened to one of the account's keys. */
export interface KeyEvent {
  kind: 'key';
  type: KeyEventType;
  keyId: string;
  /** For `limit_refused`: which limit (requests per minute, key, account or gateway concurrency). */
  limit: string | null;
  /** For `limit_refused` and `monthly_cap_reached`: how many requests were refused since the previous event. */
  refused: number | null;
  at: Date;
}

export type AccountEvent = BalanceEvent | UsageEvent | KeyEvent;

/** How many events a slow subscriber may have waiting before the oldest are dropped (the socket is not keeping up). */
const MAX_QUEUED = 256;

/** One subscriber's stream of its account's events: `ready` resolves once events from every process reach it. */
export interface AccountEventStream extends AsyncIterableIterator<AccountEvent> {
  ready: Promise<void>;
  return(): Promise<IteratorResult<AccountEvent>>;
}

type Listener = (event: AccountEvent) => void;

/**
 * Account events from committed changes (the usage batch, the ledger, the keys) to the subscribers of that account,
 * in this process and, with REDIS_URL, in every other one. Each account has a Redis channel of its own, which a
 * process listens on only while one of its subscribers watches that account: an event nobody watches costs one
 * PUBLISH, and a process never parses another account's traffic. Local subscribers hear an event at once; the
 * copy coming back from Redis is recognised by its origin and skipped, so each subscriber sees it exactly once.
 * `onPublished` listeners (alerts) run in the process that committed the change only, so they act once per change.
 */
export class AccountEventHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly listening = new Map<string, Promise<void>>();
  /** Commit listeners, each with the accounts it cares about (so an account none of them watches costs nothing). */
  private readonly publishedListeners = new Map<(userId: string, kind: AccountEvent['kind']) => void, (userId: string) => boolean>();
  /** Marks this process's messages, so it skips its own copies coming back from Redis. */
  private readonly origin = randomUUID();

  constructor(private readonly deps: { shared?: SharedState; log: Logger }) {}

  publish(userId: string, event: AccountEvent): void {
    this.publishJson(userId, event.kind, () => JSON.stringify(event));
  }

  /** Whether an event of this account may be heard (a subscriber here, other processes, or a listener of commits). */
  audible(userId: string): boolean {
    if (this.listeners.has(userId) || this.deps.shared !== undefined) return true;
    for (const hears of this.publishedListeners.values()) if (hears(userId)) return true;
    return false;
  }

  /**
   * As `publish`, for an event its producer serialises itself (a usage batch splices its records' JSON in as it
   * is), and only when someone may hear it: a subscriber in this process, or other processes.
   */
  publishJson(userId: string, kind: AccountEvent['kind'], json: string | (() => string)): void {
    for (const [listener, hears] of this.publishedListeners) if (hears(userId)) listener(userId, kind);
    const local = this.listeners.get(userId);
    if (!local && !this.deps.shared) return;
    const text = typeof json === 'string' ? json : json();
    if (local) this.deliver(local, text);
    if (this.deps.shared) void this.deps.shared.send(this.channel(userId), `${this.origin}\n${text}`);
  }

  /** Runs for every event committed by this process (not for those other processes committed) of an account `hears` names. */
  onPublished(listener: (userId: string, kind: AccountEvent['kind']) => void, hears: (userId: string) => boolean = () => true): () => void {
    this.publishedListeners.set(listener, hears);
    return () => this.publishedListeners.delete(listener);
  }

  /** Whether anyone in this process watches the account now. */
  watched(userId: string): boolean {
    return this.listeners.has(userId);
  }

  subscribe(userId: string): AccountEventStream {
    const queue: AccountEvent[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    const listener: Listener = (event) => {
      if (queue.length >= MAX_QUEUED) queue.shift();
      queue.push(event);
      wake?.();
    };
    const ready = this.add(userId, listener);
    const stop = () => {
      if (done) return;
      done = true;
      this.remove(userId, listener);
      wake?.();
    };
    const stream: AccountEventStream = {
      ready,
      async next() {
        while (!queue.length && !done) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        return queue.length ? { value: queue.shift()!, done: false } : { value: undefined, done: true };
      },
      async return() {
        stop();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    return stream;
  }

  private add(userId: string, listener: Listener): Promise<void> {
    let own = this.listeners.get(userId);
    if (!own) this.listeners.set(userId, (own = new Set()));
    own.add(listener);
    const { shared } = this.deps;
    if (!shared) return Promise.resolve();
    let listening = this.listening.get(userId);
    if (!listening) {
      listening = shared.listen(this.channel(userId), (raw) => this.received(userId, raw)).catch((error: Error) => {
        // Events from other processes do not arrive until ioredis renews the subscription; this process's still do.
        this.deps.log.warn({ err: error.message }, 'could not listen for account events from other processes');
      });
      this.listening.set(userId, listening);
    }
    return listening;
  }

  private remove(userId: string, listener: Listener): void {
    const own = this.listeners.get(userId);
    if (!own?.delete(listener) || own.size) return;
    this.listeners.delete(userId);
    this.listening.delete(userId);
    void this.deps.shared?.unlisten(this.channel(userId));
  }

  private received(userId: string, raw: string): void {
    const newline = raw.indexOf('\n');
    if (newline < 0 || raw.slice(0, newline) === this.origin) return;
    const local = this.listeners.get(userId);
    if (local) this.deliver(local, raw.slice(newline + 1));
  }

  private deliver(listeners: Set<Listener>, json: string): void {
    let event: AccountEvent;
    try {
      event = JSON.parse(json, reviveDates) as AccountEvent;
    } catch {
      return;
    }
    for (const listener of listeners) listener(event);
  }

  /**
   * On a Redis Cluster the channel is sharded and carries the account's hash tag, so it lives on the shard that holds
   * the account's wallet and limits (one master carries all of an account's traffic, and its failover is one event).
   */
  private channel(userId: string): string {
    const { prefix, isCluster } = this.deps.shared!;
    return isCluster ? `${prefix}{acct:${userId}}:events` : `${prefix}account:${userId}`;
  }
}
