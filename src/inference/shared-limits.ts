import { randomUUID } from 'node:crypto';
import type { Logger } from '../shared/logging.js';
import type { SharedState } from '../shared/redis.js';
import {
  accountConcurrencyLimited,
  capacityLimited,
  concurrencyLimited,
  DEFAULT_LIMITS,
  Limiter,
  limitsOf,
  rateLimited,
  type LimitBaselines,
  type LimitSubject,
  type RequestLimiter,
  type RequestWindow,
  type Slot,
  slotFreedBy,
} from './limits.js';

/**
 * One atomic admission on Redis's clock: the global, per-account and per-key slot sets hold leases
 * scored by their expiry (a process that dies stops renewing, so its slots drop out within one lease),
 * the per-key window holds the admission times of the last minute. A refusal changes nothing.
 * KEYS: window, key slots, account slots, global slots.
 * ARGV: window ms, rpm, per-key limit, per-account limit, global limit, lease ms, slot id.
 * Returns {0, requests in the window with this one} admitted, or a refusal with the window as it stands:
 * {code, requests in the window, ms until the window is empty[, ms until a place frees]}, code 1 at
 * capacity, 2 key concurrency, 3 key rate (with the last figure), 4 account concurrency.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, rpm, perKey, perAccount, global, lease = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
local function refused(code, extra)
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  local reset = 0
  if newest[2] then reset = math.max(0, tonumber(newest[2]) + window - now) end
  return {code, n, reset, extra}
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
if redis.call('ZCARD', KEYS[4]) >= global then return refused(1) end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[3]) >= perAccount then return refused(4) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= perKey then return refused(2) end
if n >= rpm then
  local oldest = redis.call('ZRANGE', KEYS[1], n - rpm, n - rpm, 'WITHSCORES')
  return refused(3, tonumber(oldest[2]) + window - now)
end
redis.call('ZADD', KEYS[1], now, ARGV[7])
redis.call('PEXPIRE', KEYS[1], window)
redis.call('ZADD', KEYS[2], now + lease, ARGV[7])
redis.call('PEXPIRE', KEYS[2], lease * 2)
redis.call('ZADD', KEYS[3], now + lease, ARGV[7])
redis.call('PEXPIRE', KEYS[3], lease * 2)
redis.call('ZADD', KEYS[4], now + lease, ARGV[7])
return {0, n + 1}
`;

/** KEYS: global slots, then per slot its key-slot and account-slot sets. ARGV: lease ms, then the slot ids in the same order. */
const RENEW = `
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do
  local slot = ARGV[i]
  redis.call('ZADD', KEYS[1], 'XX', expiry, slot)
  for _, set in ipairs({KEYS[2 * i - 2], KEYS[2 * i - 1]}) do
    redis.call('ZADD', set, 'XX', expiry, slot)
    redis.call('PEXPIRE', set, tonumber(ARGV[1]) * 2)
  end
end
return #ARGV - 1
`;

/** KEYS: window. ARGV: window ms. Returns {requests in the window, ms until it is empty}; counts nothing. */
const PEEK = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if not newest[2] then return {0, 0} end
return {redis.call('ZCARD', KEYS[1]), math.max(0, tonumber(newest[2]) + window - now)}
`;

type Scripted = {
  baikalPeek(window: string, windowMs: number): Promise<number[]>;
  baikalAcquire(window: string, keySlots: string, accountSlots: string, globalSlots: string, ...args: (string | number)[]): Promise<number[]>;
  baikalRenew(...keysAndArgs: (string | number)[]): Promise<number>;
};

export interface SharedLimiterOptions {
  baselines?: LimitBaselines;
  /** How long a slot outlives the process holding it; renewed every third of it while the request runs. */
  leaseMs: number;
}

/**
 * Request limits shared by every gateway process through Redis. While Redis is away each process
 * falls back to its own `Limiter` (per-process limits, as the scale-out issue allows), and returns to
 * the shared limits as soon as Redis answers again.
 */
export class SharedLimiter implements RequestLimiter {
  private readonly baselines: LimitBaselines;
  private readonly local: Limiter;
  /** Shared slots this process holds: slot id -> its key and account. Renewed until released. */
  private readonly live = new Map<string, { keyId: string; userId: string }>();
  private readonly renewTimer: NodeJS.Timeout;
  private localCount = 0;

  constructor(
    private readonly shared: SharedState,
    private readonly log: Logger,
    private readonly options: SharedLimiterOptions,
  ) {
    this.baselines = options.baselines ?? DEFAULT_LIMITS;
    this.local = new Limiter(this.baselines);
    const redis = shared.command;
    redis.defineCommand('baikalAcquire', { numberOfKeys: 4, lua: ACQUIRE });
    redis.defineCommand('baikalRenew', { lua: RENEW });
    redis.defineCommand('baikalPeek', { numberOfKeys: 1, lua: PEEK });
    this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(options.leaseMs / 3))).unref();
  }

  get inFlightTotal(): number {
    return this.live.size + this.localCount;
  }

  async acquire(subject: LimitSubject): Promise<Slot> {
    const { keyId, userId } = subject;
    const { rpm, concurrency, accountConcurrency } = limitsOf(this.baselines, subject);
    const { windowMs } = this.baselines;
    const slotId = randomUUID();
    let verdict: number[];
    try {
      if (!this.shared.healthy) throw new Error('Redis is not connected');
      verdict = await this.scripts.baikalAcquire(
        this.name('window', keyId),
        this.name('slots', keyId),
        this.name('account-slots', userId),
        this.name('slots'),
        windowMs,
        rpm,
        concurrency,
        accountConcurrency,
        this.baselines.concurrentGlobal,
        this.options.leaseMs,
        slotId,
      );
    } catch {
      return this.acquireLocally(subject);
    }
    const [code, counted = 0, resetMs = 0, freeInMs] = verdict;
    if (code !== 0) {
      const seen = { limit: rpm, remaining: Math.max(0, rpm - counted), resetMs };
      if (code === 1) throw capacityLimited(seen);
      if (code === 2) throw concurrencyLimited(concurrency, seen);
      if (code === 4) throw accountConcurrencyLimited(accountConcurrency, seen);
      throw rateLimited(rpm, freeInMs ?? windowMs, seen, windowMs);
    }
    this.live.set(slotId, { keyId, userId });
    // This request is the window's newest: it is empty a window from now.
    const window = { limit: rpm, remaining: Math.max(0, rpm - counted), resetMs: windowMs };
    return slotFreedBy(() => {
      this.live.delete(slotId);
      // If Redis cannot take it now, the lease runs out by itself.
      this.shared.command
        .multi()
        .zrem(this.name('slots', keyId), slotId)
        .zrem(this.name('account-slots', userId), slotId)
        .zrem(this.name('slots'), slotId)
        .exec()
        .catch(() => {});
    }, window);
  }

  async peek(subject: LimitSubject): Promise<RequestWindow> {
    if (!this.shared.healthy) return this.local.peek(subject);
    const { rpm } = limitsOf(this.baselines, subject);
    const [counted = 0, resetMs = 0] = await this.scripts.baikalPeek(this.name('window', subject.keyId), this.baselines.windowMs);
    return { limit: rpm, remaining: Math.max(0, rpm - counted), resetMs };
  }

  close(): void {
    clearInterval(this.renewTimer);
  }

  private acquireLocally(subject: LimitSubject): Slot {
    const slot = this.local.acquire(subject);
    this.localCount += 1;
    return slotFreedBy(() => {
      this.localCount -= 1;
      slot.release();
    }, slot.window);
  }

  private async renew(): Promise<void> {
    if (!this.live.size || !this.shared.healthy) return;
    const slots = [...this.live];
    const keys = [this.name('slots'), ...slots.flatMap(([, { keyId, userId }]) => [this.name('slots', keyId), this.name('account-slots', userId)])];
    try {
      await this.scripts.baikalRenew(keys.length, ...keys, this.options.leaseMs, ...slots.map(([slotId]) => slotId));
    } catch (error) {
      this.log.warn({ err: (error as Error).message, slots: slots.length }, 'could not renew concurrency leases');
    }
  }

  private get scripts(): Scripted {
    return this.shared.command as unknown as Scripted;
  }

  private name(kind: 'window' | 'slots' | 'account-slots', id?: string): string {
    return id === undefined ? `${this.shared.prefix}${kind}` : `${this.shared.prefix}${kind}:${id}`;
  }
}
