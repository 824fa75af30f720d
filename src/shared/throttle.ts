import { createHash } from 'node:crypto';
import type { SharedState } from './redis.js';

/** Attempts counted in a fixed window: `take` counts one unless the key is at its limit. */
export interface AttemptCounter {
  /** Counts an attempt and answers 0, or answers the seconds to wait (counting nothing) when at the limit. */
  take(key: string): Promise<number>;
  reset(key: string): Promise<void>;
}

/**
 * Fixed-window attempt counters kept in process memory. Entries expire with their window, so memory
 * stays bounded by the number of distinct keys seen in one window.
 */
export class WindowCounter implements AttemptCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds to wait when `key` is at its limit, else 0. */
  retryAfterSeconds(key: string): number {
    const entry = this.current(key);
    if (!entry || entry.count < this.limit) return 0;
    return Math.max(1, Math.ceil((entry.resetAt - this.now()) / 1000));
  }

  hit(key: string): void {
    const entry = this.current(key);
    if (entry) entry.count += 1;
    else this.windows.set(key, { count: 1, resetAt: this.now() + this.windowMs });
    if (this.windows.size > 10_000) this.sweep();
  }

  /** Check and count in one synchronous step, so parallel attempts cannot slip past the limit. */
  take(key: string): Promise<number> {
    const wait = this.retryAfterSeconds(key);
    if (!wait) this.hit(key);
    return Promise.resolve(wait);
  }

  reset(key: string): Promise<void> {
    this.windows.delete(key);
    return Promise.resolve();
  }

  private current(key: string) {
    const entry = this.windows.get(key);
    if (entry && entry.resetAt <= this.now()) {
      this.windows.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.windows) if (entry.resetAt <= now) this.windows.delete(key);
  }
}

/** Atomic check-and-count: the milliseconds to wait when at the limit, else counts and answers 0. */
const TAKE = `
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then return ttl end
  return 1000
end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

type TakeCommand = { baikalTake(key: string, limit: number, windowMs: number): Promise<number> };

/**
 * The same counter shared by every gateway process through Redis (REDIS_URL), so N processes do not
 * grant N times the attempts. While Redis is away each process counts on its own, as rate limits do.
 * Keys are hashed: a login or an address never lands in Redis as text.
 */
export class SharedWindowCounter implements AttemptCounter {
  private readonly local: WindowCounter;
  private readonly redis: TakeCommand;

  constructor(
    private readonly shared: SharedState,
    private readonly name: string,
    private readonly limit: number,
    private readonly windowMs: number,
    now: () => number = Date.now,
  ) {
    this.local = new WindowCounter(limit, windowMs, now);
    if (!('baikalTake' in shared.command)) shared.command.defineCommand('baikalTake', { numberOfKeys: 1, lua: TAKE });
    this.redis = shared.command as unknown as TakeCommand;
  }

  private keyOf(key: string): string {
    return `${this.shared.prefix}attempts:${this.name}:${createHash('sha256').update(key).digest('base64url')}`;
  }

  async take(key: string): Promise<number> {
    if (!this.shared.healthy) return this.local.take(key);
    try {
      const waitMs = await this.redis.baikalTake(this.keyOf(key), this.limit, this.windowMs);
      return waitMs > 0 ? Math.max(1, Math.ceil(waitMs / 1000)) : 0;
    } catch {
      return this.local.take(key);
    }
  }

  async reset(key: string): Promise<void> {
    await this.local.reset(key);
    if (this.shared.healthy) await this.shared.command.del(this.keyOf(key)).catch(() => undefined);
  }
}

/** A shared counter with REDIS_URL, else one in this process. */
export function attemptCounter(shared: SharedState | undefined, name: string, limit: number, windowMs: number, now: () => number): AttemptCounter {
  return shared ? new SharedWindowCounter(shared, name, limit, windowMs, now) : new WindowCounter(limit, windowMs, now);
}
